import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogLevel } from '../../contract.js';
import { CapabilityError } from '../../errors.js';
import { MAX_MEDIA_BYTES } from './media.js';

/** What a media backend needs from the command that calls it. */
export interface MediaBackendContext {
  readonly env: NodeJS.ProcessEnv;
  readonly platform: NodeJS.Platform;
  readonly signal: AbortSignal;
  readonly log: (level: LogLevel, message: string) => void;
}

/** Runs `work` with a private temporary directory, removed afterwards whatever happened. */
export async function withTempDir<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'capnode-media-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Puts ffmpeg's `-fs` (stop writing past the media limit) before the output file, the last argument. */
export function withSizeLimit(args: readonly string[]): string[] {
  return [...args.slice(0, -1), '-fs', String(MAX_MEDIA_BYTES + 1), args[args.length - 1]!];
}

/**
 * The bytes of a finished recording (screen or camera): `failed` when the recorder wrote no file,
 * `payload_too_large` with how to shrink it when it passed the media limit (`-fs` stops one byte over).
 */
export async function readRecording(output: string, what: string, howToShrink: string): Promise<Buffer> {
  const size = (await stat(output).catch(() => undefined))?.size;
  if (size === undefined) throw new CapabilityError('failed', `${what} wrote no file.`);
  if (size > MAX_MEDIA_BYTES) throw new CapabilityError('payload_too_large', `${what} passed the ${MAX_MEDIA_BYTES}-byte media limit; ${howToShrink}.`);
  return readFile(output);
}

/** Whether a PulseAudio (or PipeWire-pulse) server is reachable for ffmpeg's `pulse` input. */
export function pulseServerReachable(env: NodeJS.ProcessEnv): boolean {
  if (env.PULSE_SERVER) return true;
  const runtime = env.XDG_RUNTIME_DIR;
  return runtime !== undefined && existsSync(join(runtime, 'pulse', 'native'));
}
