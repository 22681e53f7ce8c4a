import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkBackends } from './doctorProbes.js';

const dir = mkdtempSync(join(tmpdir(), 'capnode-doctor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function program(sub: string, name: string, mode = 0o755): string {
  mkdirSync(join(dir, sub), { recursive: true });
  const file = join(dir, sub, name);
  writeFileSync(file, '#!/bin/sh\n');
  chmodSync(file, mode);
  return join(dir, sub);
}

describe.skipIf(process.platform === 'win32')('checkBackends', () => {
  it('finds a backend in an absolute PATH entry, not in a relative one (that would search the cwd) nor a file without the execute bit', async () => {
    const found = program('abs', 'ffmpeg');
    const viaRelative = relative(process.cwd(), program('rel', 'ffmpeg'));
    const noExec = program('noexec', 'ffmpeg', 0o644);
    const ffmpeg = async (PATH: string) => (await checkBackends({ PATH })).find((backend) => backend.name === 'ffmpeg')!;
    expect((await ffmpeg(found)).found).toBe(join(found, 'ffmpeg'));
    expect(await ffmpeg(`${viaRelative}:${noExec}`)).not.toHaveProperty('found');
    expect((await ffmpeg(`${viaRelative}:${noExec}:${found}`)).found).toBe(join(found, 'ffmpeg'));
    expect((await ffmpeg('')).install).toContain('ffmpeg');
  });
});
