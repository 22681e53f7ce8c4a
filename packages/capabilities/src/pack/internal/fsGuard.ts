import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { dirname, isAbsolute, join, parse, resolve, sep } from 'node:path';
import { CapabilityError } from '../../errors.js';

/** Most symlinks followed while one path is resolved (Linux's own limit). */
const MAX_SYMLINK_HOPS = 40;
/** Longest path accepted, in characters. */
export const MAX_PATH_CHARS = 4096;

/** A directory the files commands work in, resolved once: its real path and how its filesystem compares names. */
export interface FsRoot {
  readonly path: string;
  /** Names on this root's filesystem match whatever their case (macOS, Windows by default). */
  readonly caseInsensitive: boolean;
}

/** A path after resolution: its real location, whether something is there, and what. */
export interface ResolvedPath {
  /** Absolute real path: every existing component resolved (symlinks, `..`), the missing tail appended. */
  readonly path: string;
  readonly root: FsRoot;
  /** `lstat` of {@link path}; undefined when nothing is there yet. */
  readonly stats: Stats | undefined;
}

/** What {@link createPathGuard} checks against. */
export interface PathGuardOptions {
  /** Directories every path must stay in (resolved here; missing ones are dropped). */
  readonly roots: readonly string[];
  /** Directories never reachable whatever the roots say (capnode's config directory). */
  readonly denied: readonly string[];
}

/** Resolves paths and refuses those outside the roots, inside a denied directory, or not plain files and directories. */
export interface PathGuard {
  readonly roots: readonly FsRoot[];
  /** Real paths of the denied directories (for walkers to skip). */
  readonly denied: readonly string[];
  /** Resolves `input` and checks it; see {@link resolveInRoots}. */
  resolve(input: string, options?: ResolveOptions): Promise<ResolvedPath>;
  /** True when `path` (already real) is a denied directory, inside one, or (with `orAncestor`) contains one. */
  isDenied(path: string, orAncestor?: boolean): boolean;
}

export interface ResolveOptions {
  /** `must`: refuse a path where nothing is; `never`: refuse one where something is; default either. */
  readonly exists?: 'must' | 'never';
  /** The call may remove or move it: refuse a root itself and any ancestor of a denied directory. */
  readonly removes?: boolean;
}

/** A refusal of the files commands, with the reason machines branch on in `data.reason`. */
export function pathRefusal(code: 'denied' | 'unsupported' | 'invalid_arguments', reason: string, message: string, path?: string): CapabilityError {
  return new CapabilityError(code, message, { data: { reason, ...(path === undefined ? {} : { path }) } });
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** True when names on the filesystem of `dir` (a real, existing directory) match whatever their case. */
async function probeCaseInsensitive(dir: string): Promise<boolean> {
  const flipped = dir.replace(/[a-zA-Z](?=[^a-zA-Z]*$)/, (letter) => (letter === letter.toLowerCase() ? letter.toUpperCase() : letter.toLowerCase()));
  if (flipped === dir) return false;
  try {
    const [a, b] = await Promise.all([stat(dir), stat(flipped)]);
    return a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}

/** The roots as real directories; a root that does not exist or is no directory is left out. */
export async function resolveRoots(paths: readonly string[]): Promise<FsRoot[]> {
  const roots: FsRoot[] = [];
  for (const path of paths) {
    try {
      const real = await realpath(resolve(path));
      if (!(await stat(real)).isDirectory()) continue;
      roots.push({ path: real, caseInsensitive: await probeCaseInsensitive(real) });
    } catch {
      // A missing root grants nothing.
    }
  }
  return roots;
}

function fold(path: string, caseInsensitive: boolean): string {
  return caseInsensitive ? path.toLowerCase() : path;
}

/** True when `path` is `dir` or inside it. */
export function isWithin(path: string, dir: string, caseInsensitive = false): boolean {
  const p = fold(path, caseInsensitive);
  const d = fold(dir, caseInsensitive);
  return p === d || p.startsWith(d.endsWith(sep) ? d : d + sep);
}

/**
 * The real path of `input`: walks it component by component from the filesystem root, following each
 * symlink (to wherever it points, dangling ones too) and applying `..` to the real directory reached,
 * as the kernel would; the components past the last existing one are appended as given.
 */
export async function realPathOf(input: string): Promise<string> {
  let hops = 0;
  let pending = splitPath(input);
  let current = parse(input).root || sep;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '.' || part === '') continue;
    if (part === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    let info: Stats;
    try {
      info = await lstat(next);
    } catch (error) {
      if (errnoOf(error) !== 'ENOENT' && errnoOf(error) !== 'ENOTDIR') throw error;
      if (pending.includes('..')) throw pathRefusal('invalid_arguments', 'missing_parent', 'The path goes up (`..`) from a directory that does not exist.');
      return join(next, ...pending);
    }
    if (!info.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (++hops > MAX_SYMLINK_HOPS) throw pathRefusal('invalid_arguments', 'symlink_loop', 'The path has too many levels of symbolic links.');
    const target = await readlink(next);
    if (isAbsolute(target)) current = parse(target).root || sep;
    pending = [...splitPath(target), ...pending];
  }
  return current;
}

function splitPath(path: string): string[] {
  return path.split(/[\\/]+/).slice(isAbsolute(path) ? 1 : 0);
}

/** What kind of entry `stats` describes, for messages and results. */
export function kindOf(stats: Stats): 'file' | 'directory' | 'symlink' | 'fifo' | 'socket' | 'device' | 'other' {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'device';
  return 'other';
}

/**
 * Creates the guard every files and editor command resolves its paths through. A path is taken
 * relative to the first root unless absolute; `~` and `~/…` mean the user's home. It is resolved
 * to its real location first (symlinks, `..`, then the case of a case-insensitive filesystem when
 * compared), and only then checked: inside a root, outside every denied directory, and (when
 * something is there) a regular file or a directory: device files, sockets and FIFOs are refused.
 */
export async function createPathGuard(options: PathGuardOptions & { readonly home?: string }): Promise<PathGuard> {
  const roots = await resolveRoots(options.roots);
  const denied: string[] = [];
  for (const dir of options.denied) {
    denied.push(resolve(dir));
    try {
      denied.push(await realPathOf(resolve(dir)));
    } catch {
      // The lexical form is kept either way.
    }
  }
  const insensitive = roots.some((root) => root.caseInsensitive);
  const isDenied = (path: string, orAncestor = false) => denied.some((dir) => isWithin(path, dir, insensitive) || (orAncestor && isWithin(dir, path, insensitive)));

  async function resolvePath(input: string, resolveOptions: ResolveOptions = {}): Promise<ResolvedPath> {
    if (roots.length === 0) throw pathRefusal('denied', 'no_roots', 'No files root exists: set `files.roots` in the files plugin settings to directories that exist.');
    if (input.length === 0) throw pathRefusal('invalid_arguments', 'empty_path', 'The path is empty.');
    if (input.length > MAX_PATH_CHARS) throw pathRefusal('invalid_arguments', 'path_too_long', `The path is longer than ${MAX_PATH_CHARS} characters.`);
    if (input.includes('\0')) throw pathRefusal('invalid_arguments', 'nul_in_path', 'The path contains a NUL character.');
    const home = options.home;
    // Concatenated, not joined: `..` is applied to real directories by realPathOf, never lexically.
    const expanded = home !== undefined && (input === '~' || input.startsWith('~/')) ? `${home}${input.slice(1)}` : input;
    const absolute = isAbsolute(expanded) ? expanded : `${roots[0]!.path}${sep}${expanded}`;
    let real: string;
    try {
      real = await realPathOf(absolute);
    } catch (error) {
      if (error instanceof CapabilityError) throw error;
      throw pathRefusal('invalid_arguments', 'unresolvable', `The path cannot be resolved (${errnoOf(error) ?? 'error'}).`, input);
    }
    const root = roots.find((entry) => isWithin(real, entry.path, entry.caseInsensitive));
    if (!root) throw pathRefusal('denied', 'outside_roots', `The path is outside the files roots (${roots.map((entry) => entry.path).join(', ')}); a symlink that leaves them is not followed.`, input);
    if (isDenied(real, resolveOptions.removes === true)) throw pathRefusal('denied', 'config_dir', "The path is in (or holds) capnode's own config directory, which the files commands never reach.", input);
    if (resolveOptions.removes && fold(real, root.caseInsensitive) === fold(root.path, root.caseInsensitive)) throw pathRefusal('denied', 'root_itself', 'A files root itself cannot be moved or deleted.', input);
    let stats: Stats | undefined;
    try {
      stats = await lstat(real);
    } catch (error) {
      if (errnoOf(error) !== 'ENOENT' && errnoOf(error) !== 'ENOTDIR') throw pathRefusal('invalid_arguments', 'unreadable', `The path cannot be read (${errnoOf(error) ?? 'error'}).`, input);
    }
    if (stats && !stats.isFile() && !stats.isDirectory()) throw pathRefusal('unsupported', 'special_file', `The path is a ${kindOf(stats)}; only regular files and directories are served.`, input);
    if (!stats && resolveOptions.exists === 'must') throw pathRefusal('invalid_arguments', 'not_found', 'Nothing exists at that path.', input);
    if (stats && resolveOptions.exists === 'never') throw pathRefusal('invalid_arguments', 'exists', `A ${kindOf(stats)} already exists at that path.`, input);
    return { path: real, root, stats };
  }

  return { roots, denied, resolve: resolvePath, isDenied };
}
