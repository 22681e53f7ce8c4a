import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findChromiumExecutable } from './chromiumPath.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('findChromiumExecutable', () => {
  it('takes CAPNODE_CHROMIUM as given', () => {
    expect(findChromiumExecutable({ CAPNODE_CHROMIUM: '/opt/my/chrome', PATH: '' }, 'linux')).toBe('/opt/my/chrome');
  });

  it('finds an executable chromium on PATH (absolute entries only), skipping non-executable files', () => {
    const dir = mkdtempSync(join(tmpdir(), 'capnode-chromium-'));
    dirs.push(dir);
    const plain = join(dir, 'plain');
    const bin = join(dir, 'bin');
    mkdirSync(plain);
    mkdirSync(bin);
    writeFileSync(join(plain, 'chromium'), '');
    writeFileSync(join(bin, 'google-chrome'), '#!/bin/sh\n');
    chmodSync(join(bin, 'google-chrome'), 0o755);
    expect(findChromiumExecutable({ PATH: ['relative', plain, bin].join(':') }, 'linux')).toBe(join(bin, 'google-chrome'));
  });

  it('looks in the standard places on macOS and Windows', () => {
    expect(findChromiumExecutable({ HOME: '/nonexistent' }, 'darwin')).toBeUndefined();
    expect(findChromiumExecutable({ LOCALAPPDATA: '/nonexistent' }, 'win32')).toBeUndefined();
  });
});
