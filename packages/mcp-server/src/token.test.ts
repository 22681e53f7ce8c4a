import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateToken, isInsecureTokenFileError, loadOrCreateToken, rotateToken } from './token.js';

const posix = process.platform !== 'win32';

describe('token helpers', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'capnode-token-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('generates 43 base64url characters from 32 random bytes, never the same twice', () => {
    const tokens = new Set(Array.from({ length: 100 }, generateToken));
    expect(tokens.size).toBe(100);
    for (const token of tokens) {
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    }
  });

  it('creates the token file (0600) and its directory (0700) on first use, then keeps it', async () => {
    const path = join(dir, 'nested', 'config', 'mcp-token');
    const first = await loadOrCreateToken(path);
    expect(first.created).toBe(true);
    expect(first.token).toHaveLength(43);
    expect((await readFile(path, 'utf8')).trim()).toBe(first.token);
    if (posix) {
      expect((await stat(path)).mode & 0o777).toBe(0o600);
      expect((await stat(join(dir, 'nested', 'config'))).mode & 0o777).toBe(0o700);
    }
    const second = await loadOrCreateToken(path);
    expect(second).toEqual({ token: first.token, created: false });
  });

  it('regenerates only when the file is missing or empty', async () => {
    const path = join(dir, 'mcp-token');
    await writeFile(path, '  \n', { mode: 0o600 });
    const fromEmpty = await loadOrCreateToken(path);
    expect(fromEmpty.created).toBe(true);
    expect(fromEmpty.token).toHaveLength(43);
    if (posix) expect((await stat(path)).mode & 0o777).toBe(0o600);
    await writeFile(path, 'user-chosen-token\n', { mode: 0o600 });
    expect(await loadOrCreateToken(path)).toEqual({ token: 'user-chosen-token', created: false });
    await rm(path);
    const recreated = await loadOrCreateToken(path);
    expect(recreated.created).toBe(true);
  });

  it('agrees on one token when several starts race', async () => {
    const path = join(dir, 'mcp-token');
    const results = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateToken(path)));
    const tokens = new Set(results.map((result) => result.token));
    expect(tokens.size).toBe(1);
    expect((await readFile(path, 'utf8')).trim()).toBe([...tokens][0]);
  });

  it('rotates to a fresh token with mode 0600', async () => {
    const path = join(dir, 'mcp-token');
    const { token } = await loadOrCreateToken(path);
    const rotated = await rotateToken(path);
    expect(rotated).not.toBe(token);
    expect(rotated).toHaveLength(43);
    expect((await loadOrCreateToken(path)).token).toBe(rotated);
    if (posix) expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  describe.skipIf(!posix)('token file attacks', () => {
    it('refuses a token file that is a symlink to another file, without reading or changing the target', async () => {
      const target = join(dir, 'victim');
      await writeFile(target, 'not-a-token-but-a-secret\n', { mode: 0o600 });
      const path = join(dir, 'mcp-token');
      await symlink(target, path);
      const failure = await loadOrCreateToken(path).catch((error: unknown) => error);
      expect(isInsecureTokenFileError(failure)).toBe(true);
      expect((failure as Error).message).toContain(`refusing to use the token file ${path}: it is a symbolic link`);
      expect((failure as { problem: string }).problem).toBe('symlink');
      expect(await readFile(target, 'utf8')).toBe('not-a-token-but-a-secret\n');
    });

    it('refuses a token file others can read (0644) and names the chmod 600 fix; works once fixed', async () => {
      const path = join(dir, 'mcp-token');
      await writeFile(path, 'shared-token-value\n');
      await chmod(path, 0o644);
      const failure = await loadOrCreateToken(path).catch((error: unknown) => error);
      expect(isInsecureTokenFileError(failure)).toBe(true);
      expect((failure as Error).message).toBe(`refusing to use the token file ${path}: other users can access it (mode 0644); make it private with: chmod 600 ${path}`);
      expect((await stat(path)).mode & 0o777).toBe(0o644);
      await chmod(path, 0o600);
      expect(await loadOrCreateToken(path)).toEqual({ token: 'shared-token-value', created: false });
    });

    it('refuses a directory (or FIFO) where the token file should be', async () => {
      const path = join(dir, 'mcp-token');
      await mkdir(path);
      const failure = await loadOrCreateToken(path).catch((error: unknown) => error);
      expect((failure as { problem: string }).problem).toBe('not_regular');
    });

    it('rotating replaces a symlinked token file with a regular one and leaves the target alone', async () => {
      const target = join(dir, 'victim');
      await writeFile(target, 'keep\n', { mode: 0o600 });
      const path = join(dir, 'mcp-token');
      await symlink(target, path);
      const rotated = await rotateToken(path);
      expect(await readFile(target, 'utf8')).toBe('keep\n');
      expect(await loadOrCreateToken(path)).toEqual({ token: rotated, created: false });
    });
  });
});
