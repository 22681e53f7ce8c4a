import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { loadPrivateKey, MAX_PRIVATE_KEY_BYTES } from './oauthKey.js';

const posix = process.platform !== 'win32';
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'capnode-oauth-key-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const pem = () => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

test('reads a 0600 PKCS#8 key, also through a symlink (mounted secrets)', async () => {
  const path = join(dir, 'key.pem');
  const key = pem();
  writeFileSync(path, key, { mode: 0o600 });
  expect(await loadPrivateKey(path, 's')).toBe(key);
  symlinkSync(path, join(dir, 'link.pem'));
  expect(await loadPrivateKey(join(dir, 'link.pem'), 's')).toBe(key);
});

test('refuses keys other users can read, oversized or non-PEM files, directories and missing files', async () => {
  const path = join(dir, 'key.pem');
  writeFileSync(path, pem(), { mode: 0o600 });
  if (posix) {
    chmodSync(path, 0o640);
    await expect(loadPrivateKey(path, 's')).rejects.toMatchObject({ code: 'auth_failed', message: expect.stringMatching(/other users can access it \(mode 640\)/) });
  }
  writeFileSync(join(dir, 'big.pem'), 'x'.repeat(MAX_PRIVATE_KEY_BYTES + 1), { mode: 0o600 });
  await expect(loadPrivateKey(join(dir, 'big.pem'), 's')).rejects.toMatchObject({ message: expect.stringMatching(/larger than/) });
  writeFileSync(join(dir, 'cert.pem'), '-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n', { mode: 0o600 });
  await expect(loadPrivateKey(join(dir, 'cert.pem'), 's')).rejects.toMatchObject({ message: expect.stringMatching(/not a PKCS#8 PEM private key/) });
  await expect(loadPrivateKey(dir, 's')).rejects.toMatchObject({ message: expect.stringMatching(/not a regular file/) });
  await expect(loadPrivateKey(join(dir, 'missing.pem'), 's')).rejects.toMatchObject({ message: expect.stringMatching(/ENOENT/) });
});
