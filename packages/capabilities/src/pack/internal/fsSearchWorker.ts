/** What the caller of `fs.search` chooses, as checked arguments; the worker gets it unchanged. */
export interface SearchQuery {
  readonly pattern: string;
  /** Search for `pattern` as bytes (no regular expression). */
  readonly literal: boolean;
  readonly ignoreCase: boolean;
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  readonly hidden: boolean;
  readonly gitignore: boolean;
  readonly maxMatches: number;
  readonly contextLines: number;
}

/** What a search worker is asked to do (one message per search). */
export interface SearchJob extends SearchQuery {
  /** Real path of the directory searched. */
  readonly dir: string;
  readonly maxFileBytes: number;
  readonly maxLineChars: number;
  readonly maxFiles: number;
  /** Real paths never entered (capnode's config directory). */
  readonly denied: readonly string[];
  readonly globCaseInsensitive: boolean;
  /**
   * Shared by every worker of one search (`Int32Array` of 2): [0] the next chunk of files to claim,
   * [1] the file ordinal after which no worker needs to look (one found `maxMatches` by then).
   * Every worker walks the tree in the same order and numbers the files it would search the same
   * way; each searches only the chunks of `chunkFiles` it claimed, so the work balances itself
   * whatever the shape of the tree.
   */
  readonly claims: SharedArrayBuffer;
  readonly chunkFiles: number;
}

/** One matching line. */
export interface SearchMatch {
  /** Walk order of the file (its ordinal among the files searched): merges the workers' matches in one order. */
  readonly key?: number;
  readonly path: string;
  /** 1-based line number. */
  readonly line: number;
  /** 1-based column (UTF-16 units in the line) of the match. */
  readonly column: number;
  readonly text: string;
  readonly before?: readonly string[];
  readonly after?: readonly string[];
}

/** What the worker answers. */
export interface SearchReport {
  readonly matches: SearchMatch[];
  readonly filesSearched: number;
  readonly filesSkipped: number;
  readonly truncated: boolean;
}

type GlobMatcherFactory = (glob: string, caseInsensitive: boolean) => ((path: string) => boolean) | undefined;

interface IgnoreRule {
  readonly negate: boolean;
  readonly dirOnly: boolean;
  readonly match: (path: string) => boolean;
}

/** The rules of one `.gitignore`, and the directory (relative to the search) they apply under. */
export interface IgnoreRuleSet {
  readonly base: string;
  readonly rules: IgnoreRule[];
}

/** What {@link createIgnoreRules} gives the walker. */
export interface IgnoreRules {
  parse(text: string, base: string): IgnoreRuleSet | undefined;
  ignored(sets: readonly IgnoreRuleSet[], rel: string, isDir: boolean): boolean;
}

/**
 * `.gitignore` rules: comments, `!` negation, a trailing `/` for directories only, anchoring as
 * git does; the last matching rule of the innermost file decides. Self-contained: the worker gets
 * its source text.
 */
export function createIgnoreRules(createGlobMatcher: GlobMatcherFactory, caseInsensitive: boolean): IgnoreRules {
  return {
    parse(text, base) {
      const rules: IgnoreRule[] = [];
      for (const raw of text.split(/\r?\n/)) {
        let line = raw.replace(/(?<!\\)\s+$/, '');
        if (line === '' || line.startsWith('#')) continue;
        const negate = line.startsWith('!');
        if (negate) line = line.slice(1);
        const dirOnly = line.endsWith('/');
        const match = createGlobMatcher(line, caseInsensitive);
        if (match) rules.push({ negate, dirOnly, match });
        if (rules.length >= 10_000) break;
      }
      return rules.length > 0 ? { base, rules } : undefined;
    },
    ignored(sets, rel, isDir) {
      let result = false;
      for (const set of sets) {
        const local = set.base === '' ? rel : rel.slice(set.base.length + 1);
        for (const rule of set.rules) if ((!rule.dirOnly || isDir) && rule.negate === result && rule.match(local)) result = !rule.negate;
      }
      return result;
    },
  };
}

/** What {@link createFileSearcher} gives the walker. */
export interface FileSearcher {
  /** Reads a regular file (not through a symlink, never blocking on a FIFO) up to the size bound. */
  readFile(path: string): Buffer | undefined;
  /** Searches one file; `order` sorts its matches among every worker's (the file's ordinal in the walk). */
  searchFile(path: string, order: number): void;
  /** True once the match bound was passed: the walk stops. */
  readonly full: boolean;
  report(): SearchReport;
  /** Records that the walk stopped before the end (too many files). */
  markTruncated(): void;
}

/**
 * Searches one file at a time for the job's pattern, collecting bounded matches with context.
 * Literal patterns are looked for as bytes first (files without them are never decoded), others by
 * the regular expression over the file's text. Self-contained: the worker gets its source text.
 */
export function createFileSearcher(fs: any, job: SearchJob): FileSearcher {
  const O_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);
  const matches: SearchMatch[] = [];
  let filesSearched = 0;
  let filesSkipped = 0;
  let truncated = false;
  let buffer = Buffer.allocUnsafe(1 << 16);
  const needle = job.literal && !job.ignoreCase ? Buffer.from(job.pattern, 'utf8') : undefined;
  const regex = needle ? undefined : new RegExp(job.literal ? job.pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : job.pattern, job.ignoreCase ? 'gim' : 'gm');
  const cut = (line: string) => (line.length > job.maxLineChars ? `${line.slice(0, job.maxLineChars)}…` : line);

  // Open, one read, close: a short read of a regular file is its end, so a small file costs three syscalls.
  const readFile = (path: string): Buffer | undefined => {
    let fd: number;
    try {
      fd = fs.openSync(path, O_FLAGS);
    } catch {
      return undefined;
    }
    try {
      let filled = 0;
      for (;;) {
        if (filled === buffer.length) {
          if (buffer.length > job.maxFileBytes) return undefined;
          const bigger = Buffer.allocUnsafe(Math.min(buffer.length * 2, job.maxFileBytes + 1));
          buffer.copy(bigger, 0, 0, filled);
          buffer = bigger;
        }
        const wanted = buffer.length - filled;
        const read = fs.readSync(fd, buffer, filled, wanted, filled);
        filled += read;
        if (read < wanted) break;
      }
      return buffer.subarray(0, filled);
    } catch {
      return undefined;
    } finally {
      fs.closeSync(fd);
    }
  };

  const contextOf = (text: string, lineStart: number, lineEnd: number) => {
    if (job.contextLines === 0) return {};
    const before: string[] = [];
    let start = lineStart;
    while (before.length < job.contextLines && start > 0) {
      const previous = text.lastIndexOf('\n', start - 2) + 1;
      before.unshift(cut(text.slice(previous, start - 1).replace(/\r$/, '')));
      start = previous;
    }
    const after: string[] = [];
    let end = lineEnd;
    while (after.length < job.contextLines && end < text.length) {
      const next = text.indexOf('\n', end + 1);
      const stop = next < 0 ? text.length : next;
      if (end + 1 > text.length || (end + 1 === text.length && next < 0)) break;
      after.push(cut(text.slice(end + 1, stop).replace(/\r$/, '')));
      end = stop;
    }
    return { before, after };
  };

  let key = 0;
  const record = (path: string, text: string, index: number, state: { line: number; from: number }) => {
    for (let at = text.indexOf('\n', state.from); at >= 0 && at < index; at = text.indexOf('\n', at + 1)) {
      state.line++;
      state.from = at + 1;
    }
    const lineStart = text.lastIndexOf('\n', index - 1) + 1;
    const newline = text.indexOf('\n', index);
    const lineEnd = newline < 0 ? text.length : newline;
    matches.push({ key, path, line: state.line, column: index - lineStart + 1, text: cut(text.slice(lineStart, lineEnd).replace(/\r$/, '')), ...contextOf(text, lineStart, lineEnd) });
    return lineEnd;
  };

  const searchFile = (path: string, order: number): void => {
    key = order;
    const data = readFile(path);
    if (data === undefined) {
      filesSkipped++;
      return;
    }
    if ((data.length > 8192 ? data.subarray(0, 8192) : data).indexOf(0) >= 0) {
      filesSkipped++;
      return;
    }
    filesSearched++;
    // Bytes first: most files do not hold a literal, and those are never decoded.
    if (needle && data.indexOf(needle) < 0) return;
    const text = data.toString('utf8');
    const state = { line: 1, from: 0 };
    if (needle) {
      for (let at = text.indexOf(job.pattern); at >= 0; ) {
        if (matches.length >= job.maxMatches) {
          truncated = true;
          return;
        }
        const lineEnd = record(path, text, at, state);
        at = text.indexOf(job.pattern, lineEnd + 1);
      }
      return;
    }
    regex!.lastIndex = 0;
    for (let found = regex!.exec(text); found !== null; found = regex!.exec(text)) {
      if (matches.length >= job.maxMatches) {
        truncated = true;
        return;
      }
      const lineEnd = record(path, text, found.index, state);
      regex!.lastIndex = Math.max(lineEnd + 1, found.index + 1);
    }
  };

  return {
    readFile,
    searchFile,
    get full() {
      return truncated;
    },
    report: () => ({ matches, filesSearched, filesSkipped, truncated }),
    markTruncated: () => void (truncated = true),
  };
}

/**
 * One search: walks the tree with synchronous IO (a worker's own thread, so nothing of the host
 * waits), never follows symlinks, skips what is not a regular file, hidden names unless asked,
 * `.git`, what `.gitignore` files ignore and binary files (a NUL in their first 8 KiB). Self-contained
 * (it refers to nothing outside itself and gets what it needs as arguments) because its source text
 * is what the worker runs: the same text from the sources under test and from the bundle.
 */
export function runSearchJob(fs: any, job: SearchJob, createGlobMatcher: GlobMatcherFactory, ignoreRules: typeof createIgnoreRules, fileSearcher: typeof createFileSearcher): SearchReport {
  const compile = (globs: readonly string[]) => globs.map((glob) => createGlobMatcher(glob, job.globCaseInsensitive)).filter((m): m is (path: string) => boolean => m !== undefined);
  const include = compile(job.include);
  const exclude = compile(job.exclude);
  const rules = ignoreRules(createGlobMatcher, job.globCaseInsensitive);
  const searcher = fileSearcher(fs, job);
  const isDenied = (path: string) => job.denied.some((dir) => path === dir || path.startsWith(`${dir}/`));
  const claims = new Int32Array(job.claims);
  let ordinal = -1;
  let chunkStart = -1;
  let chunkEnd = -1;
  const stack: { dir: string; rel: string; sets: IgnoreRuleSet[] }[] = [{ dir: job.dir, rel: '', sets: [] }];
  walk: while (stack.length > 0) {
    const { dir, rel, sets: parentSets } = stack.pop()!;
    let entries: { name: string; isFile(): boolean; isDirectory(): boolean }[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    let sets = parentSets;
    if (job.gitignore && entries.some((entry) => entry.name === '.gitignore' && entry.isFile())) {
      const data = searcher.readFile(`${dir}/.gitignore`);
      const set = data ? rules.parse(data.toString('utf8'), rel) : undefined;
      if (set) sets = [...parentSets, set];
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const dirs: { dir: string; rel: string; sets: IgnoreRuleSet[] }[] = [];
    for (let index = 0; index < entries.length; index++) {
      const entry = entries[index]!;
      const name = entry.name;
      if (name === '.git' || (!job.hidden && name.startsWith('.'))) continue;
      const childRel = rel === '' ? name : `${rel}/${name}`;
      if (entry.isDirectory()) {
        const child = `${dir}/${name}`;
        if (isDenied(child) || (sets.length > 0 && rules.ignored(sets, childRel, true)) || exclude.some((match) => match(childRel))) continue;
        dirs.push({ dir: child, rel: childRel, sets });
      } else if (entry.isFile()) {
        if (include.length > 0 && !include.some((match) => match(childRel))) continue;
        if (exclude.some((match) => match(childRel)) || (sets.length > 0 && rules.ignored(sets, childRel, false))) continue;
        // Every worker numbers the same files the same way; past the bound, or past where one worker
        // already found enough, nothing more is needed.
        if (++ordinal >= job.maxFiles) {
          searcher.markTruncated();
          break walk;
        }
        if (ordinal > Atomics.load(claims, 1)) break walk;
        while (ordinal >= chunkEnd) {
          chunkStart = Atomics.add(claims, 0, 1) * job.chunkFiles;
          chunkEnd = chunkStart + job.chunkFiles;
        }
        if (ordinal < chunkStart) continue;
        searcher.searchFile(`${dir}/${name}`, ordinal);
        if (searcher.full) {
          for (let stop = Atomics.load(claims, 1); ordinal < stop; stop = Atomics.load(claims, 1)) if (Atomics.compareExchange(claims, 1, stop, ordinal) === stop) break;
          break walk;
        }
      }
    }
    // Pushed last-first, so the stack pops the directories in name order.
    stack.push(...dirs.reverse());
  }
  return searcher.report();
}


/**
 * A search worker's program: answers each job message with its report. Kept warm between searches
 * (starting a worker costs far more than a small search); self-contained like {@link runSearchJob}.
 */
export function searchWorkerMain(
  requireFn: (id: string) => any,
  createGlobMatcher: GlobMatcherFactory,
  ignoreRules: typeof createIgnoreRules,
  fileSearcher: typeof createFileSearcher,
  runJob: typeof runSearchJob,
): void {
  const { parentPort } = requireFn('node:worker_threads');
  const fs = requireFn('node:fs');
  parentPort.on('message', (job: SearchJob) => parentPort.postMessage(runJob(fs, job, createGlobMatcher, ignoreRules, fileSearcher)));
}
