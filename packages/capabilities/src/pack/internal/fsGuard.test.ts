import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCapabilityError } from '../../errors.js';
import { createPathGuard, isWithin, realPathOf } from './fsGuard.js';

let base: string;
let root: string;
let outside: string;
let config: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'capnode-guard-')));
  root = join(base, 'root');
  outside = join(base, 'outside');
  config = join(root, '.config', 'capnode');
  mkdirSync(join(root, 'sub'), { recursive: true });
  mkdirSync(config, { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'sub', 'a.txt'), 'a');
  writeFileSync(join(outside, 'secret.txt'), 's');
  writeFileSync(join(config, 'mcp-token'), 't');
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

async function refusal(promise: Promise<unknown>): Promise<{ code: string; reason: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (isCapabilityError(error)) return { code: error.code, reason: error.data?.reason };
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('path guard', () => {
  it('resolves relative paths against the first root, `~` against home, and `..` physically', async () => {
    const guard = await createPathGuard({ roots: [root], denied: [config], home: root });
    expect((await guard.resolve('sub/a.txt')).path).toBe(join(root, 'sub', 'a.txt'));
    expect((await guard.resolve('~/sub/a.txt')).path).toBe(join(root, 'sub', 'a.txt'));
    expect((await guard.resolve(`${root}/sub/../sub/./a.txt`)).path).toBe(join(root, 'sub', 'a.txt'));
    expect((await guard.resolve('new/file.txt')).stats).toBeUndefined();
  });

  it('refuses `..` out of the root and absolute paths elsewhere (denied, outside_roots)', async () => {
    const guard = await createPathGuard({ roots: [root], denied: [] });
    expect(await refusal(guard.resolve('../outside/secret.txt'))).toEqual({ code: 'denied', reason: 'outside_roots' });
    expect(await refusal(guard.resolve(join(outside, 'secret.txt')))).toEqual({ code: 'denied', reason: 'outside_roots' });
    expect(await refusal(guard.resolve(`${root}-sibling/x`))).toEqual({ code: 'denied', reason: 'outside_roots' });
  });

  it('follows a symlink that stays inside the root, refuses one that leaves it (dangling ones too)', async () => {
    symlinkSync(join(root, 'sub'), join(root, 'inside-link'));
    symlinkSync(outside, join(root, 'escape'));
    symlinkSync(join(outside, 'not-yet.txt'), join(root, 'dangling'));
    symlinkSync('../../outside', join(root, 'sub', 'relative-escape'));
    const guard = await createPathGuard({ roots: [root], denied: [] });
    expect((await guard.resolve('inside-link/a.txt')).path).toBe(join(root, 'sub', 'a.txt'));
    expect(await refusal(guard.resolve('escape/secret.txt'))).toEqual({ code: 'denied', reason: 'outside_roots' });
    expect(await refusal(guard.resolve('dangling'))).toEqual({ code: 'denied', reason: 'outside_roots' });
    expect(await refusal(guard.resolve('sub/relative-escape/secret.txt'))).toEqual({ code: 'denied', reason: 'outside_roots' });
    // Out through a link and back in by `..`: where the kernel would land, inside, so served.
    expect((await guard.resolve('sub/relative-escape/../root/sub/a.txt')).path).toBe(join(root, 'sub', 'a.txt'));
    // `..` after a symlink applies to where the link points, as the kernel does.
    expect(await refusal(guard.resolve('escape/../outside/secret.txt'))).toEqual({ code: 'denied', reason: 'outside_roots' });
  });

  it("never reaches the config directory, whatever the roots, nor removes a directory holding it", async () => {
    symlinkSync(config, join(root, 'sub', 'to-config'));
    const guard = await createPathGuard({ roots: [root, config], denied: [config] });
    expect(await refusal(guard.resolve(join(config, 'mcp-token')))).toEqual({ code: 'denied', reason: 'config_dir' });
    expect(await refusal(guard.resolve('sub/to-config/mcp-token'))).toEqual({ code: 'denied', reason: 'config_dir' });
    expect(await refusal(guard.resolve(join(root, '.config'), { removes: true }))).toEqual({ code: 'denied', reason: 'config_dir' });
    expect((await guard.resolve(join(root, '.config'))).path).toBe(join(root, '.config'));
    expect(await refusal(guard.resolve(root, { removes: true }))).toEqual({ code: 'denied', reason: 'config_dir' });
  });

  it('refuses a root itself as a move or delete target', async () => {
    const guard = await createPathGuard({ roots: [root], denied: [] });
    expect(await refusal(guard.resolve(root, { removes: true }))).toEqual({ code: 'denied', reason: 'root_itself' });
  });

  it('refuses FIFOs, sockets and device files (unsupported, special_file)', async () => {
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(root, 'sock'), resolve));
    try {
      const guard = await createPathGuard({ roots: [root, '/dev'], denied: [] });
      expect(await refusal(guard.resolve('pipe'))).toEqual({ code: 'unsupported', reason: 'special_file' });
      expect(await refusal(guard.resolve('sock'))).toEqual({ code: 'unsupported', reason: 'special_file' });
      expect(await refusal(guard.resolve('/dev/null'))).toEqual({ code: 'unsupported', reason: 'special_file' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses bad input: empty, NUL, too long, a symlink loop, `..` past a missing directory', async () => {
    symlinkSync(join(root, 'loop-b'), join(root, 'loop-a'));
    symlinkSync(join(root, 'loop-a'), join(root, 'loop-b'));
    const guard = await createPathGuard({ roots: [root], denied: [] });
    expect((await refusal(guard.resolve(''))).reason).toBe('empty_path');
    expect((await refusal(guard.resolve('a\0b'))).reason).toBe('nul_in_path');
    expect((await refusal(guard.resolve('a'.repeat(5000)))).reason).toBe('path_too_long');
    expect((await refusal(guard.resolve('loop-a/x'))).reason).toBe('symlink_loop');
    expect((await refusal(guard.resolve('missing/../../outside'))).reason).toBe('missing_parent');
    expect((await refusal(guard.resolve('nothing', { exists: 'must' }))).reason).toBe('not_found');
    expect((await refusal(guard.resolve('sub', { exists: 'never' }))).reason).toBe('exists');
  });

  it('grants nothing without a root that exists', async () => {
    const guard = await createPathGuard({ roots: [join(base, 'missing')], denied: [] });
    expect(await refusal(guard.resolve('x'))).toEqual({ code: 'denied', reason: 'no_roots' });
  });

  it('compares case-insensitively when asked (case-insensitive filesystems)', () => {
    expect(isWithin('/Users/Me/Docs/x', '/users/me', true)).toBe(true);
    expect(isWithin('/Users/Me/Docs/x', '/users/me', false)).toBe(false);
    expect(isWithin('/a/bc', '/a/b')).toBe(false);
  });

  it('realPathOf keeps the missing tail as given', async () => {
    expect(await realPathOf(join(root, 'sub', 'new', 'deeper'))).toBe(join(root, 'sub', 'new', 'deeper'));
  });
});
