import { closeSync, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { flag } from '../args.js';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';

/** How often `logs -f` looks for new lines. */
const FOLLOW_INTERVAL_MS = 200;
/** Most bytes read back for the tail (a rotated log holds at most 1 MiB). */
const TAIL_BYTES = 2 * 1024 * 1024;

function linesFlag(context: Context): number {
  const raw = flag(context.args, 'lines');
  if (raw === undefined) return 50;
  if (!/^\d+$/.test(raw)) throw new CliError('usage', `-n/--lines must be a number of lines, got '${raw}'`);
  return Number(raw);
}

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** Bytes `from`…`to` of the open file `fd` as text. */
function readRange(fd: number, from: number, to: number): string {
  if (to <= from) return '';
  const buffer = Buffer.alloc(to - from);
  const read = readSync(fd, buffer, 0, buffer.length, from);
  return buffer.subarray(0, read).toString('utf8');
}

/** The last `count` lines of the open file `fd` and the offset after them. */
function tail(fd: number | undefined, count: number): { text: string; end: number } {
  if (fd === undefined) return { text: '', end: 0 };
  const size = fstatSync(fd).size;
  const text = readRange(fd, Math.max(0, size - TAIL_BYTES), size);
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return { text: count === 0 ? '' : lines.slice(-count).join('\n'), end: size };
}

function openOf(path: string): number | undefined {
  try {
    return openSync(path, 'r');
  } catch {
    return undefined;
  }
}

/**
 * Prints lines appended to `path` until SIGINT/SIGTERM, from `start` in `opened` (the file the tail
 * was read from). It holds the file open, so a rotation (host.log renamed to host.log.1) loses
 * nothing: the old file is read to its end before the new one is read from its start.
 */
function follow(path: string, opened: number | undefined, start: number): Promise<number> {
  return new Promise((resolve) => {
    let fd = opened;
    let inode = fd === undefined ? undefined : fstatSync(fd).ino;
    let offset = start;
    let partial = '';
    const drain = () => {
      if (fd === undefined) return;
      const size = fstatSync(fd).size;
      // Truncated in place: read it again from its start.
      if (size < offset) offset = 0;
      const buffer = Buffer.alloc(size - offset);
      const read = buffer.length > 0 ? readSync(fd, buffer, 0, buffer.length, offset) : 0;
      offset += read;
      const chunk = partial + buffer.subarray(0, read).toString('utf8');
      const end = chunk.lastIndexOf('\n');
      partial = chunk.slice(end + 1);
      if (end !== -1) process.stdout.write(chunk.slice(0, end + 1));
    };
    const poll = () => {
      drain();
      const stats = statOf(path);
      if (!stats || stats.ino === inode) return;
      // Rotated (or created): the old file was read to its end above; a last unfinished line ends here.
      if (partial) process.stdout.write(`${partial}\n`);
      partial = '';
      if (fd !== undefined) closeSync(fd);
      fd = openOf(path);
      inode = fd === undefined ? undefined : fstatSync(fd).ino;
      offset = 0;
      drain();
    };
    const timer = setInterval(poll, FOLLOW_INTERVAL_MS);
    const stop = (code: number) => () => {
      clearInterval(timer);
      if (fd !== undefined) closeSync(fd);
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(code);
    };
    const onInt = stop(130);
    const onTerm = stop(0);
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
  });
}

/** `capnode logs [-f] [-n N]`: the tail of `<config dir>/logs/host.log`; `-f` follows it (also across rotation) until Ctrl-C. */
export async function logs(context: Context): Promise<number> {
  if (context.args.positionals.length > 1) throw new CliError('usage', `unexpected argument '${context.args.positionals[1]}' — usage: capnode logs [-f] [-n N]`);
  const path = context.paths.hostLog;
  const count = linesFlag(context);
  const following = context.args.flags.has('follow');
  const stats = statOf(path);
  if (stats && !stats.isFile()) throw new CliError('failure', `${path} is not a file; the host writes its log there (remove it, then restart capnode serve)`);
  if (!stats) {
    context.err(`capnode: no host log yet at ${path} — the host writes it once it runs (capnode serve)${following ? '; waiting for it' : ''}`);
    if (!following) return 0;
  }
  // One open file for the tail and what follows it: a rotation between the two loses nothing.
  const fd = openOf(path);
  let end: number;
  try {
    const read = tail(fd, count);
    end = read.end;
    if (read.text) context.out(read.text);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    throw error;
  }
  if (following) return follow(path, fd, end);
  if (fd !== undefined) closeSync(fd);
  return 0;
}
