import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPrivateFileExclusive, createPrivateFileExclusiveSync, writePrivateFileAtomic, writePrivateFileAtomicSync } from './atomicFile.js';

const posix = process.platform !== 'win32';
let dir: string;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'capnode-atomic-')));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const mode = (path: string) => statSync(path).mode & 0o777;
const leftovers = (folder = dir) => readdirSync(folder).filter((name) => name.endsWith('.tmp'));

const writers = {
  async: (path: string, data: string, options?: { mode?: number }) => writePrivateFileAtomic(path, data, options),
  sync: async (path: string, data: string, options?: { mode?: number }) => writePrivateFileAtomicSync(path, data, options),
};

for (const [kind, write] of Object.entries(writers)) {
  describe(`writePrivateFileAtomic (${kind})`, () => {
    it('writes a 0600 file, creating a missing directory 0700', async () => {
      const path = join(dir, 'nested', 'token');
      await write(path, 'secret\n');
      expect(readFileSync(path, 'utf8')).toBe('secret\n');
      if (posix) {
        expect(mode(path)).toBe(0o600);
        expect(mode(join(dir, 'nested'))).toBe(0o700);
      }
      expect(leftovers(join(dir, 'nested'))).toEqual([]);
    });

    it('replaces an existing file and narrows it to the requested mode', async () => {
      const path = join(dir, 'settings.json');
      writeFileSync(path, 'old', { mode: 0o644 });
      await write(path, 'new', { mode: 0o600 });
      expect(readFileSync(path, 'utf8')).toBe('new');
      if (posix) expect(mode(path)).toBe(0o600);
      await write(path, 'wider', { mode: 0o644 });
      if (posix) expect(mode(path)).toBe(0o644);
    });

    it('replaces a symlink at the path instead of writing through it', async () => {
      const target = join(dir, 'victim');
      writeFileSync(target, 'untouched');
      const path = join(dir, 'token');
      symlinkSync(target, path);
      await write(path, 'mine');
      expect(lstatSync(path).isSymbolicLink()).toBe(false);
      expect(readFileSync(path, 'utf8')).toBe('mine');
      expect(readFileSync(target, 'utf8')).toBe('untouched');
    });

    it('keeps the old file and removes the temporary one when the write fails', async () => {
      const path = join(dir, 'token');
      writeFileSync(path, 'old');
      await expect(write(path, {} as string)).rejects.toThrow();
      expect(readFileSync(path, 'utf8')).toBe('old');
      expect(leftovers()).toEqual([]);
    });

    it('removes the temporary file when the rename fails', async () => {
      const path = join(dir, 'occupied');
      mkdirSync(path);
      writeFileSync(join(path, 'inside'), 'x');
      await expect(write(path, 'data')).rejects.toThrow();
      expect(readFileSync(join(path, 'inside'), 'utf8')).toBe('x');
      expect(leftovers()).toEqual([]);
    });
  });
}

describe('writePrivateFileAtomic (async) abort', () => {
  it('leaves the old file when the signal is aborted', async () => {
    const path = join(dir, 'token');
    writeFileSync(path, 'old');
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(writePrivateFileAtomic(path, 'new', { signal: controller.signal })).rejects.toThrow('stop');
    expect(readFileSync(path, 'utf8')).toBe('old');
    expect(leftovers()).toEqual([]);
  });
});

const creators = {
  async: (path: string, data: string) => createPrivateFileExclusive(path, data),
  sync: async (path: string, data: string) => createPrivateFileExclusiveSync(path, data),
};

for (const [kind, create] of Object.entries(creators)) {
  describe(`createPrivateFileExclusive (${kind})`, () => {
    it('creates a 0600 file once; a second call finds it there and changes nothing', async () => {
      const path = join(dir, 'sub', 'identity.json');
      expect(await create(path, 'first')).toBe(true);
      expect(await create(path, 'second')).toBe(false);
      expect(readFileSync(path, 'utf8')).toBe('first');
      if (posix) expect(mode(path)).toBe(0o600);
      expect(leftovers(join(dir, 'sub'))).toEqual([]);
    });

    it('of racing creators exactly one wins', async () => {
      const path = join(dir, 'token');
      const results = await Promise.all(Array.from({ length: 8 }, (_, index) => create(path, `token ${index}`)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(readFileSync(path, 'utf8')).toBe(`token ${results.indexOf(true)}`);
      expect(leftovers()).toEqual([]);
    });

    it('reports a symlink at the path, dangling or not, as taken and never follows it', async () => {
      const target = join(dir, 'nowhere');
      const path = join(dir, 'token');
      symlinkSync(target, path);
      expect(await create(path, 'mine')).toBe(false);
      expect(existsSync(target)).toBe(false);
      expect(lstatSync(path).isSymbolicLink()).toBe(true);
      expect(leftovers()).toEqual([]);
    });

    it('throws other failures and removes the temporary file', async () => {
      const path = join(dir, 'token');
      await expect(create(path, {} as string)).rejects.toThrow();
      expect(existsSync(path)).toBe(false);
      expect(leftovers()).toEqual([]);
    });
  });
}
