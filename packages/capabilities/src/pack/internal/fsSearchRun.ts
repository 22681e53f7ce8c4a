import type { CommandSuccess } from '../../content.js';
import { CapabilityError } from '../../errors.js';
import { pathRefusal, type PathGuard } from './fsGuard.js';
import { checkPattern, isLiteralPattern, runSearch } from './fsSearch.js';
import { createGlobMatcher } from './glob.js';
import type { SearchQuery } from './fsSearchWorker.js';

/** Longest line shown in a match or its context, in characters. */
export const MAX_MATCH_LINE_CHARS = 500;
/** Largest file `fs.search` looks into; larger ones are skipped. */
export const MAX_SEARCH_FILE_BYTES = 16 * 1024 * 1024;
/** Most files one search opens. */
export const MAX_SEARCH_FILES = 1_000_000;

export interface SearchArgs extends SearchQuery {
  readonly path: string;
  readonly timeoutMs: number;
}

/** `fs.search`: checks the directory, the pattern and the globs, then runs the walk in a worker under the deadline. */
export async function searchPath(guard: PathGuard, args: SearchArgs, signal: AbortSignal): Promise<CommandSuccess> {
  const target = await guard.resolve(args.path, { exists: 'must' });
  if (!target.stats?.isDirectory()) throw pathRefusal('invalid_arguments', 'not_directory', 'The path is not a directory: fs.search searches a tree (read a file with fs.read).');
  if (!args.literal) checkPattern(args.pattern, args.ignoreCase);
  for (const glob of [...args.include, ...args.exclude]) {
    if (!createGlobMatcher(glob, false)) throw new CapabilityError('invalid_arguments', `The glob ${JSON.stringify(glob.slice(0, 80))} is too long or has too many {…} alternatives.`, { data: { reason: 'invalid_glob' } });
  }
  const report = await runSearch(
    {
      ...querySlice(args),
      dir: target.path,
      literal: args.literal || isLiteralPattern(args.pattern),
      maxFileBytes: MAX_SEARCH_FILE_BYTES,
      maxLineChars: MAX_MATCH_LINE_CHARS,
      maxFiles: MAX_SEARCH_FILES,
      denied: guard.denied,
      globCaseInsensitive: target.root.caseInsensitive,
    },
    { timeoutMs: args.timeoutMs, signal },
  );
  const structured = { path: target.path, ...report, count: report.matches.length };
  const lines = report.matches.map((match) => `${match.path}:${match.line}:${match.column}: ${match.text}`);
  const text = `${lines.join('\n')}${lines.length > 0 ? '\n' : ''}${report.matches.length} match${report.matches.length === 1 ? '' : 'es'} in ${report.filesSearched} files searched${report.truncated ? ' (truncated: more matches exist)' : ''}`;
  return { ok: true, content: [{ type: 'text', text }], structured };
}

/** The query's own fields, without the path and deadline that stay on this side of the worker. */
function querySlice({ pattern, literal, ignoreCase, include, exclude, hidden, gitignore, maxMatches, contextLines }: SearchArgs): SearchQuery {
  return { pattern, literal, ignoreCase, include, exclude, hidden, gitignore, maxMatches, contextLines };
}
