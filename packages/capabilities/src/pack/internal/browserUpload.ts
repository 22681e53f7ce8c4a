/**
 * The files `browser.upload` hands to a page: read from the files roots (the same guard as `fs.*`),
 * or given inline as base64 (the bytes a gateway's upload envelope carries). Bounded as OpenClaw bounds
 * its browser uploads: each file ≤ 10 MiB, all ≤ 16 MiB, at most 256 files.
 */
import { basename } from 'node:path';
import { mimeTypeOfName } from '@capnode/toolkit';
import { CapabilityError } from '../../errors.js';
import type { PathGuard } from './fsGuard.js';
import { openCheckedForRead, readPrefix } from './fsIo.js';

/** Largest file one upload sets (OpenClaw's browser-proxy file limit). */
export const MAX_BROWSER_UPLOAD_FILE_BYTES = 10 * 1024 * 1024;
/** Largest sum of the files of one upload. */
export const MAX_BROWSER_UPLOAD_TOTAL_BYTES = 16 * 1024 * 1024;
/** Most files one upload sets. */
export const MAX_BROWSER_UPLOAD_FILES = 256;
/** Longest base64 of one inline file (the encoding of {@link MAX_BROWSER_UPLOAD_FILE_BYTES}). */
export const MAX_BROWSER_UPLOAD_BASE64_CHARS = Math.ceil(MAX_BROWSER_UPLOAD_FILE_BYTES / 3) * 4;

/** One file as Playwright sets it on an input or a file chooser. */
export interface UploadPayload {
  readonly name: string;
  readonly mimeType: string;
  readonly buffer: Buffer;
}

function refusal(code: 'invalid_arguments' | 'payload_too_large' | 'denied', reason: string, message: string, extra: Record<string, unknown> = {}): CapabilityError {
  return new CapabilityError(code, message, { data: { reason, ...extra } });
}

/** A path that is a URL (`https://…`, `file:///…`) rather than a file on this machine; `C:\…` is a path. */
export function isUrlLike(path: string): boolean {
  return /^[a-z][a-z0-9+.-]+:/i.test(path.trim());
}

function checkSizes(bytes: number, total: number, name: string): void {
  if (bytes > MAX_BROWSER_UPLOAD_FILE_BYTES) throw refusal('payload_too_large', 'file_too_large', `${name} is larger than ${MAX_BROWSER_UPLOAD_FILE_BYTES} bytes (10 MiB), the most one upload file may be.`, { bytes });
  if (total > MAX_BROWSER_UPLOAD_TOTAL_BYTES) throw refusal('payload_too_large', 'upload_too_large', `The files together are larger than ${MAX_BROWSER_UPLOAD_TOTAL_BYTES} bytes (16 MiB), the most one upload may carry.`, { bytes: total });
}

/**
 * Reads `paths` for an upload: every path resolved and checked by `guard` (inside a files root, out of
 * capnode's config directory, a symlink leaving a root refused), a regular file, within the size limits,
 * each checked before anything is read and again on the bytes read. Nothing is read when one fails.
 */
export async function readUploadPaths(guard: PathGuard, paths: readonly string[], signal?: AbortSignal): Promise<UploadPayload[]> {
  if (paths.length > MAX_BROWSER_UPLOAD_FILES) throw refusal('invalid_arguments', 'too_many_files', `At most ${MAX_BROWSER_UPLOAD_FILES} files per upload.`);
  const url = paths.find(isUrlLike);
  if (url !== undefined) throw refusal('invalid_arguments', 'url_as_path', 'browser.upload takes paths of files on this machine, not URLs.', { path: url.slice(0, 200) });
  const resolved = [];
  let total = 0;
  for (const input of paths) {
    const found = await guard.resolve(input, { exists: 'must' });
    if (!found.stats?.isFile()) throw refusal('invalid_arguments', 'not_a_file', `${input} is not a regular file.`, { path: input });
    total += found.stats.size;
    checkSizes(found.stats.size, total, input);
    resolved.push({ input, real: found.path, checked: found.stats });
  }
  const payloads: UploadPayload[] = [];
  total = 0;
  for (const { input, real, checked } of resolved) {
    signal?.throwIfAborted();
    // Opened as checked (no symlink swapped in, no FIFO); read at most one byte past the limit, so a
    // file that grew since the check fails, never a partial one.
    const { handle, stats } = await openCheckedForRead(real, checked);
    try {
      const buffer = await readPrefix(handle, Math.min(stats.size, MAX_BROWSER_UPLOAD_FILE_BYTES) + 1);
      total += buffer.length;
      checkSizes(buffer.length, total, input);
      if (buffer.length > stats.size) throw refusal('denied', 'changed', `${input} changed while it was being read; try again.`, { path: input });
      payloads.push({ name: basename(real), mimeType: mimeTypeOfName(real), buffer });
    } finally {
      await handle.close();
    }
  }
  return payloads;
}

/** A file name a page may see: its last path component, no control characters, at most 200 characters. */
export function cleanUploadName(raw: string): string {
  const last = raw.split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex
  const clean = last.replace(/[\u0000-\u001f\u007f]/g, '_').trim().slice(0, 200);
  return clean === '' || clean === '.' || clean === '..' ? 'upload' : clean;
}

/** Inline files (`{ name, base64 }`) as payloads: canonical base64 only, within the size limits. */
export function decodeUploadFiles(files: readonly { readonly name: string; readonly base64: string; readonly mimeType?: string | undefined }[]): UploadPayload[] {
  if (files.length > MAX_BROWSER_UPLOAD_FILES) throw refusal('invalid_arguments', 'too_many_files', `At most ${MAX_BROWSER_UPLOAD_FILES} files per upload.`);
  let total = 0;
  return files.map((file) => {
    const name = cleanUploadName(file.name);
    if (file.base64.length > MAX_BROWSER_UPLOAD_BASE64_CHARS) checkSizes(Math.floor((file.base64.length * 3) / 4), total, name);
    const buffer = Buffer.from(file.base64, 'base64');
    if (buffer.toString('base64') !== file.base64) throw refusal('invalid_arguments', 'invalid_base64', `The content of ${name} is not canonical base64.`);
    total += buffer.byteLength;
    checkSizes(buffer.byteLength, total, name);
    return { name, mimeType: file.mimeType ?? mimeTypeOfName(name), buffer };
  });
}
