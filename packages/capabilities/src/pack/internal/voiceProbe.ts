import { findExecutable } from '../../internal/which.js';

/** What the voice pack's modules share: where programs are found and which platform's backends apply. */
export interface PackEnvironment {
  /** Environment whose PATH finds the backend programs, and that they run with. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Platform whose backends are used. Default `process.platform` (tests pick others for argument builders). */
  readonly platform?: NodeJS.Platform;
}

export function envOf(options: PackEnvironment): NodeJS.ProcessEnv {
  return options.env ?? process.env;
}

export function platformOf(options: PackEnvironment): NodeJS.Platform {
  return options.platform ?? process.platform;
}

/** Finds the first of `names` on PATH; `undefined` when none is there. */
export async function findFirst(names: readonly string[], options: PackEnvironment): Promise<{ readonly name: string; readonly file: string } | undefined> {
  for (const name of names) {
    const file = await findExecutable(name, { env: envOf(options), platform: platformOf(options) });
    if (file) return { name, file };
  }
  return undefined;
}

/** Duration of a PCM WAV file from its header (`fmt ` byte rate and `data` size); `undefined` when not one. */
export function wavDurationMs(data: Uint8Array): number | undefined {
  const buffer = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (buffer.length < 12 || buffer.toString('latin1', 0, 4) !== 'RIFF' || buffer.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  let byteRate: number | undefined;
  let offset = 12;
  while (offset + 8 <= buffer.length) {
    const id = buffer.toString('latin1', offset, offset + 4);
    let size = buffer.readUInt32LE(offset + 4);
    if (id === 'fmt ' && offset + 16 <= buffer.length) byteRate = buffer.readUInt32LE(offset + 16);
    if (id === 'data') {
      // Streaming writers (espeak-ng to a pipe) leave the size at 0 or 0xffffffff: take what is there.
      if (size === 0 || size === 0xffffffff || offset + 8 + size > buffer.length) size = buffer.length - offset - 8;
      return byteRate ? Math.round((size / byteRate) * 1000) : undefined;
    }
    offset += 8 + size + (size % 2);
  }
  return undefined;
}
