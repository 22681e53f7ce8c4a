import type { Stats } from 'node:fs';
import { copyFile, lstat, mkdir, readdir, rename, rm, rmdir, unlink } from 'node:fs/promises';
import { basename, dirname, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { mimeTypeOfName } from '@capnode/toolkit';
import type { CommandSuccess, Content } from '../../content.js';
import { CapabilityError } from '../../errors.js';
import { kindOf, pathRefusal, type PathGuard, type ResolvedPath } from './fsGuard.js';
import { openCheckedForRead, readPrefix, writeFileAtomic } from './fsIo.js';
import { looksLikeText, readLineRange, utf8Boundary } from './fsRead.js';
import { createGlobMatcher } from './glob.js';
import { MAX_WRITE_BYTES } from './filesLimits.js';

function result(structured: Record<string, unknown>, content?: Content[]): CommandSuccess {
  return { ok: true, content: content ?? [{ type: 'text', text: JSON.stringify(structured) }], structured };
}

/** The fields of `fs.stat` and of each `fs.list` entry. */
export function describeStats(stats: Stats): Record<string, unknown> {
  return {
    type: kindOf(stats),
    size: stats.size,
    mode: `0${(stats.mode & 0o7777).toString(8)}`,
    modified: stats.mtime.toISOString(),
    created: stats.birthtime.toISOString(),
  };
}

export interface ReadOptions {
  readonly startLine?: number | undefined;
  readonly endLine?: number | undefined;
  readonly maxBytes: number;
  readonly encoding: 'auto' | 'text' | 'base64';
}

/** `fs.read`: text (whole, a prefix, or a line range) or, for binary files, a base64 resource. */
export async function readPath(target: ResolvedPath, options: ReadOptions, signal: AbortSignal): Promise<CommandSuccess> {
  if (target.stats?.isDirectory()) throw pathRefusal('invalid_arguments', 'is_directory', 'The path is a directory: list it with fs.list.');
  const { handle, stats } = await openCheckedForRead(target.path, target.stats);
  try {
    const ranged = options.startLine !== undefined || options.endLine !== undefined;
    if (ranged && options.encoding !== 'base64') {
      const sniff = await readPrefix(handle, Math.min(stats.size, 8192));
      if (options.encoding === 'auto' && !looksLikeText(sniff)) throw pathRefusal('invalid_arguments', 'binary_file', 'The file is binary: line ranges apply to text only (read it without them for base64).');
      const read = await readLineRange(handle, options.startLine ?? 1, options.endLine, options.maxBytes, signal);
      return result({ path: target.path, encoding: 'utf8', size: stats.size, ...read }, [{ type: 'text', text: read.text }]);
    }
    // One byte past the bound tells a cut read from a whole one, even for a file that grew since stat.
    const data = await readPrefix(handle, Math.min(stats.size, options.maxBytes) + 1);
    const truncated = data.length > options.maxBytes;
    const kept = data.subarray(0, Math.min(data.length, options.maxBytes));
    const text = options.encoding === 'text' || (options.encoding === 'auto' && looksLikeText(kept));
    if (text) {
      const bytes = truncated ? utf8Boundary(kept) : kept.length;
      const value = kept.subarray(0, bytes).toString('utf8');
      return result({ path: target.path, encoding: 'utf8', size: stats.size, bytes, truncated, text: value }, [{ type: 'text', text: value }]);
    }
    const mimeType = mimeTypeOfName(target.path);
    const base64 = kept.toString('base64');
    const fields = { path: target.path, encoding: 'base64', mimeType, size: stats.size, bytes: kept.length, truncated, base64 };
    const content: Content[] = [
      { type: 'resource', resource: { uri: pathToFileURL(target.path).href, mimeType, blob: base64 } },
      { type: 'text', text: JSON.stringify({ ...fields, base64: undefined, base64Bytes: base64.length }) },
    ];
    return result(fields, content);
  } finally {
    await handle.close();
  }
}

export interface WriteOptions {
  readonly data: Buffer;
  readonly onExists: 'replace' | 'fail';
  readonly createParents: boolean;
}

/** `fs.write`: creates or replaces a file atomically, keeping a replaced file's permission bits. */
export async function writePath(guard: PathGuard, target: ResolvedPath, options: WriteOptions): Promise<CommandSuccess> {
  if (options.data.length > MAX_WRITE_BYTES) {
    throw new CapabilityError('payload_too_large', `The content is ${options.data.length} bytes, over the ${MAX_WRITE_BYTES}-byte limit of fs.write.`, { data: { reason: 'too_large', limit: MAX_WRITE_BYTES } });
  }
  if (target.stats?.isDirectory()) throw pathRefusal('invalid_arguments', 'is_directory', 'The path is a directory.');
  if (target.stats && options.onExists === 'fail') throw pathRefusal('invalid_arguments', 'exists', 'A file already exists at that path (onExists: fail).');
  const parent = await guard.resolve(dirname(target.path));
  if (!parent.stats) {
    if (!options.createParents) throw pathRefusal('invalid_arguments', 'missing_parent', 'The parent directory does not exist (set createParents to make it).');
    await mkdir(parent.path, { recursive: true });
  } else if (!parent.stats.isDirectory()) throw pathRefusal('invalid_arguments', 'parent_not_directory', 'The parent is not a directory.');
  await writeFileAtomic(target.path, options.data, target.stats ? { replaces: target.stats } : {});
  const stats = await lstat(target.path);
  return result({ path: target.path, created: target.stats === undefined, bytes: options.data.length, mode: `0${(stats.mode & 0o7777).toString(8)}` });
}

export interface ListOptions {
  readonly depth: number;
  readonly glob?: string | undefined;
  readonly hidden: boolean;
  readonly limit: number;
}

/** `fs.list`: the entries under a directory, breadth first, to `depth`, filtered, at most `limit`. */
export async function listPath(guard: PathGuard, target: ResolvedPath, options: ListOptions, signal: AbortSignal): Promise<CommandSuccess> {
  if (!target.stats?.isDirectory()) throw pathRefusal('invalid_arguments', 'not_directory', 'The path is not a directory.');
  const match = options.glob === undefined ? undefined : createGlobMatcher(options.glob, target.root.caseInsensitive);
  if (options.glob !== undefined && !match) throw new CapabilityError('invalid_arguments', 'The glob is too long or has too many {…} alternatives.', { data: { reason: 'invalid_glob' } });
  const entries: Record<string, unknown>[] = [];
  let truncated = false;
  let level = [target.path];
  for (let depth = 1; depth <= options.depth && level.length > 0 && !truncated; depth++) {
    const next: string[] = [];
    for (const dir of level) {
      if (signal.aborted) throw new CapabilityError('cancelled', 'The listing was cancelled.');
      const names = await readdir(dir, { withFileTypes: true }).catch(() => []);
      names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of names) {
        if (!options.hidden && entry.name.startsWith('.')) continue;
        const path = `${dir}${sep}${entry.name}`;
        if (guard.isDenied(path)) continue;
        const rel = relative(target.path, path).split(sep).join('/');
        if (entry.isDirectory()) next.push(path);
        if (match && !match(rel)) continue;
        if (entries.length >= options.limit) {
          truncated = true;
          break;
        }
        const stats = await lstat(path).catch(() => undefined);
        entries.push({ path: rel, ...(stats ? describeStats(stats) : { type: 'unknown' }) });
      }
      if (truncated) break;
    }
    level = next;
  }
  return result({ path: target.path, entries, count: entries.length, truncated });
}

/** `fs.stat`. */
export function statPath(target: ResolvedPath, input: string): CommandSuccess {
  if (!target.stats) return result({ path: target.path, exists: false });
  return result({ path: target.path, exists: true, ...describeStats(target.stats), ...(input === target.path ? {} : { requested: input }) });
}

/** `fs.move`: renames within a filesystem, copies then removes a file across filesystems. */
export async function movePath(source: ResolvedPath, destination: ResolvedPath, overwrite: boolean): Promise<CommandSuccess> {
  if (destination.stats && !overwrite) throw pathRefusal('invalid_arguments', 'exists', 'Something already exists at the destination (set overwrite to replace a file).');
  if (destination.stats?.isDirectory()) throw pathRefusal('invalid_arguments', 'is_directory', 'The destination is a directory; name the new path inside it.');
  if (source.stats?.isDirectory() && (destination.path === source.path || destination.path.startsWith(`${source.path}${sep}`))) {
    throw pathRefusal('invalid_arguments', 'into_itself', 'A directory cannot be moved into itself.');
  }
  const parent = await lstat(dirname(destination.path)).catch(() => undefined);
  if (!parent?.isDirectory()) throw pathRefusal('invalid_arguments', 'missing_parent', 'The destination directory does not exist.');
  try {
    await rename(source.path, destination.path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV' || !source.stats?.isFile()) throw error;
    await copyFile(source.path, destination.path);
    await unlink(source.path);
  }
  return result({ from: source.path, to: destination.path, type: source.stats ? kindOf(source.stats) : 'unknown' });
}

/** `fs.delete`: a file, an empty directory, or (with `recursive`) a whole tree; symlinks inside are removed, never followed. */
export async function deletePath(target: ResolvedPath, recursive: boolean): Promise<CommandSuccess> {
  if (!target.stats) throw pathRefusal('invalid_arguments', 'not_found', 'Nothing exists at that path.');
  if (target.stats.isDirectory()) {
    if (recursive) await rm(target.path, { recursive: true, force: false });
    else {
      try {
        await rmdir(target.path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOTEMPTY' || (error as NodeJS.ErrnoException).code === 'EEXIST') {
          throw pathRefusal('invalid_arguments', 'not_empty', 'The directory is not empty (set recursive to delete it with everything in it).');
        }
        throw error;
      }
    }
  } else await unlink(target.path);
  return result({ path: target.path, deleted: true, type: kindOf(target.stats) });
}

/** `fs.mkdir`: a directory, with its missing parents unless `parents` is false. */
export async function makeDirectory(target: ResolvedPath, parents: boolean): Promise<CommandSuccess> {
  if (target.stats) {
    if (target.stats.isDirectory()) return result({ path: target.path, created: false });
    throw pathRefusal('invalid_arguments', 'exists', `A ${kindOf(target.stats)} already exists at that path.`);
  }
  try {
    await mkdir(target.path, { recursive: parents });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw pathRefusal('invalid_arguments', 'missing_parent', 'The parent directory does not exist (set parents to make it).');
    throw error;
  }
  return result({ path: target.path, created: true, name: basename(target.path) });
}
