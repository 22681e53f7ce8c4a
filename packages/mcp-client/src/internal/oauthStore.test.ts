import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createOAuthStore, MAX_OAUTH_FILE_BYTES, oauthFileName } from './oauthStore.js';

const posix = process.platform !== 'win32';
let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'capnode-oauth-store-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

test('file names are lower-case and encode everything outside [a-z0-9_-], so no name escapes the directory', () => {
  expect(oauthFileName('GitHub')).toBe('github.json');
  expect(oauthFileName('my.server')).toBe('my~2eserver.json');
  expect(oauthFileName('../../etc/passwd')).toBe('~2e~2e~2f~2e~2e~2fetc~2fpasswd.json');
  expect(oauthFileName('ä b')).toBe('~c3~a4~20b.json');
});

test('writes 0600 into a 0700 directory and reads back; a record for another URL reads as empty', async () => {
  const dir = join(root, 'oauth');
  const store = createOAuthStore(dir, 'web', 'https://a.example/mcp');
  expect(await store.read()).toEqual({ version: 1, server: 'web', url: 'https://a.example/mcp' });
  await store.write({ version: 1, server: 'web', url: 'https://a.example/mcp', tokens: { access_token: 'at', token_type: 'bearer' } });
  if (posix) {
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  }
  expect((await store.read()).tokens).toEqual({ access_token: 'at', token_type: 'bearer' });
  expect((await createOAuthStore(dir, 'web', 'https://b.example/mcp').read()).tokens).toBeUndefined();
  await store.remove();
  expect((await store.read()).tokens).toBeUndefined();
});

test('refuses oversized and malformed files with auth_failed, naming the fix', async () => {
  const store = createOAuthStore(root, 'web', 'https://a.example/mcp');
  writeFileSync(store.path, 'x'.repeat(MAX_OAUTH_FILE_BYTES + 1), { mode: 0o600 });
  await expect(store.read()).rejects.toMatchObject({ code: 'auth_failed', message: expect.stringMatching(/larger than/) });
  writeFileSync(store.path, '{not json', { mode: 0o600 });
  await expect(store.read()).rejects.toMatchObject({ code: 'auth_failed', message: expect.stringMatching(/capnode servers login web/) });
  writeFileSync(store.path, '{"version":2}', { mode: 0o600 });
  await expect(store.read()).rejects.toMatchObject({ code: 'auth_failed', message: expect.stringMatching(/unknown format/) });
});

test('concurrent writes are serialized; the last one wins and no temp file is left', async () => {
  const store = createOAuthStore(root, 'web', 'https://a.example/mcp');
  await Promise.all(
    Array.from({ length: 10 }, (_, i) => store.write({ version: 1, server: 'web', url: 'https://a.example/mcp', tokens: { access_token: `t${i}`, token_type: 'bearer' } })),
  );
  expect(JSON.parse(readFileSync(store.path, 'utf8')).tokens.access_token).toBe('t9');
  const { readdirSync } = await import('node:fs');
  expect(readdirSync(root)).toEqual(['web.json']);
});
