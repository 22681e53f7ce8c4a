import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogLevel } from '../../contract.js';

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

/** Whether a PulseAudio (or PipeWire-pulse) server is reachable for ffmpeg's `pulse` input. */
export function pulseServerReachable(env: NodeJS.ProcessEnv): boolean {
  if (env.PULSE_SERVER) return true;
  const runtime = env.XDG_RUNTIME_DIR;
  return runtime !== undefined && existsSync(join(runtime, 'pulse', 'native'));
}
