import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findChromiumExecutable } from './chromiumPath.js';

const dir = mkdtempSync(join(tmpdir(), 'capnode-chromium-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function executable(path: string, mode = 0o755): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, '#!/bin/sh\n');
  chmodSync(path, mode);
  return path;
}

describe('findChromiumExecutable', () => {
  it('takes CAPNODE_CHROMIUM when it names an executable file, and nothing else then', () => {
    const file = executable(join(dir, 'override', 'my-chrome'));
    expect(findChromiumExecutable({ CAPNODE_CHROMIUM: file, PATH: '' }, 'linux')).toBe(file);
    expect(findChromiumExecutable({ CAPNODE_CHROMIUM: join(dir, 'missing'), PATH: join(dir, 'bin') }, 'linux')).toBeUndefined();
  });

  it('finds chromium, chromium-browser and google-chrome on PATH (absolute entries only, executable files only)', () => {
    const bin = join(dir, 'bin');
    executable(join(bin, 'chromium'), 0o644);
    const chrome = executable(join(bin, 'google-chrome'));
    expect(findChromiumExecutable({ PATH: `relative:${bin}` }, 'linux')).toBe(chrome);
    expect(findChromiumExecutable({ PATH: 'relative' }, 'linux')).toBeUndefined();
  });

  it('looks in the standard Windows locations', () => {
    const local = join(dir, 'local');
    const chrome = executable(join(local, 'Google', 'Chrome', 'Application', 'chrome.exe'));
    expect(findChromiumExecutable({ LOCALAPPDATA: local }, 'win32')).toBe(chrome);
    expect(findChromiumExecutable({}, 'win32')).toBeUndefined();
  });

  it('looks in ~/Applications on macOS', () => {
    const app = executable(join(dir, 'home', 'Applications', 'Chromium.app', 'Contents', 'MacOS', 'Chromium'));
    expect(findChromiumExecutable({ HOME: join(dir, 'home') }, 'darwin')).toBe(app);
  });
});
