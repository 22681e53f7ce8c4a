import { createPublicKey, verify } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDeviceAuthPayload } from '@capnode/protocol/gateway';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadOrCreateDeviceIdentity } from './deviceIdentityFile.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'capnode-identity-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const posix = process.platform !== 'win32';

describe('device identity file', () => {
  it('is created once, 0600 in a 0700 directory, and loads the same identity afterwards', () => {
    const path = join(dir, 'nested', 'gateway-device.json');
    const first = loadOrCreateDeviceIdentity(path);
    expect(first.created).toBe(true);
    expect(first.identity.deviceId).toMatch(/^[0-9a-f]{64}$/);
    if (posix) {
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, 'nested')).mode & 0o777).toBe(0o700);
    }
    const again = loadOrCreateDeviceIdentity(path);
    expect(again.created).toBe(false);
    expect(again.identity.deviceId).toBe(first.identity.deviceId);
    expect(again.identity.publicKey).toBe(first.identity.publicKey);
  });

  it('signs the handshake payload verifiably with the raw public key it declares', async () => {
    const { identity } = loadOrCreateDeviceIdentity(join(dir, 'id.json'));
    const payload = buildDeviceAuthPayload({ deviceId: identity.deviceId, clientId: 'node-host', clientMode: 'node', role: 'node', scopes: [], signedAtMs: 1, token: 't', nonce: 'n', platform: 'linux', deviceFamily: 'Linux' });
    const signature = await identity.sign(payload);
    expect(signature).toMatch(/^[A-Za-z0-9_-]{86}$/);
    const raw = Buffer.from(identity.publicKey, 'base64url');
    expect(raw).toHaveLength(32);
    const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });
    expect(verify(null, Buffer.from(payload), key, Buffer.from(signature, 'base64url'))).toBe(true);
  });

  it('keeps device tokens per gateway and role in the same file', () => {
    const path = join(dir, 'id.json');
    const { deviceTokens } = loadOrCreateDeviceIdentity(path);
    deviceTokens.save('ws://a', 'node', 'tok-a');
    deviceTokens.save('ws://b', 'operator', 'tok-b');
    const reloaded = loadOrCreateDeviceIdentity(path).deviceTokens;
    expect(reloaded.load('ws://a', 'node')).toBe('tok-a');
    expect(reloaded.load('ws://a', 'operator')).toBeUndefined();
    reloaded.clear('ws://a', 'node');
    expect(loadOrCreateDeviceIdentity(path).deviceTokens.load('ws://a', 'node')).toBeUndefined();
    if (posix) expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('refuses a damaged or inconsistent file instead of silently replacing the identity', () => {
    const path = join(dir, 'id.json');
    writeFileSync(path, '{ not json', { mode: 0o600 });
    expect(() => loadOrCreateDeviceIdentity(path)).toThrow(/damaged.*delete it/);
    const good = loadOrCreateDeviceIdentity(join(dir, 'good.json'));
    const data = JSON.parse(readFileSync(good.path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...data, deviceId: 'f'.repeat(64) }), { mode: 0o600 });
    expect(() => loadOrCreateDeviceIdentity(path)).toThrow(/inconsistent/);
  });

  it.runIf(posix)('refuses a file others can read (it holds the private key) and names the chmod 600 fix', () => {
    const path = join(dir, 'id.json');
    const first = loadOrCreateDeviceIdentity(path);
    chmodSync(path, 0o644);
    expect(() => loadOrCreateDeviceIdentity(path)).toThrow(`refusing to use the device identity ${path}: other users can access it (mode 0644); make it private with: chmod 600 ${path}`);
    expect(statSync(path).mode & 0o777).toBe(0o644);
    chmodSync(path, 0o600);
    expect(loadOrCreateDeviceIdentity(path).identity.deviceId).toBe(first.identity.deviceId);
  });

  it.runIf(posix)('refuses a symlink to another file and never creates through it', () => {
    const target = join(dir, 'elsewhere.json');
    const real = loadOrCreateDeviceIdentity(join(dir, 'real.json'));
    const path = join(dir, 'id.json');
    symlinkSync(real.path, path);
    expect(() => loadOrCreateDeviceIdentity(path)).toThrow(/refusing to use the device identity .*id\.json: it is a symbolic link/);
    const dangling = join(dir, 'dangling.json');
    symlinkSync(target, dangling);
    expect(() => loadOrCreateDeviceIdentity(dangling)).toThrow(/symbolic link|cannot create/);
    expect(existsSync(target)).toBe(false);
  });
});
