import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createPrivateFileExclusiveSync, readPrivateFileSync, writePrivateFileAtomicSync } from '@capnode/toolkit/node';
import type { GatewayRole } from '@capnode/protocol/gateway';
import { z } from 'zod';
import { GatewayError } from '../errors.js';
import type { DeviceIdentity, DeviceTokenStore } from './identity.js';

/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const identityFileSchema = z.object({
  version: z.literal(1),
  deviceId: z.string().regex(/^[0-9a-f]{64}$/),
  publicKey: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  privateKey: z.string().includes('PRIVATE KEY'),
  createdAt: z.string().optional(),
  deviceTokens: z.record(z.string(), z.object({ token: z.string().min(1), savedAt: z.string().optional() })).default({}),
});
type IdentityFile = z.infer<typeof identityFileSchema>;

/** A device identity kept in a file, with the device tokens gateways issued to it. */
export interface DeviceIdentityFile {
  readonly path: string;
  readonly identity: DeviceIdentity;
  /** Device tokens, saved in the same file (0600). */
  readonly deviceTokens: DeviceTokenStore;
  /** True when this call created the file. */
  readonly created: boolean;
}

function rawPublicKey(key: KeyObject): Buffer {
  const der = key.export({ type: 'spki', format: 'der' });
  if (der.length !== ED25519_SPKI_PREFIX.length + 32 || !der.subarray(0, ED25519_SPKI_PREFIX.length).equals(ED25519_SPKI_PREFIX)) {
    throw new GatewayError('identity', 'the device key is not an Ed25519 key');
  }
  return der.subarray(ED25519_SPKI_PREFIX.length);
}

function deviceIdOf(raw: Buffer): string {
  return createHash('sha256').update(raw).digest('hex');
}

function newIdentityFile(): IdentityFile {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = rawPublicKey(publicKey);
  return {
    version: 1,
    deviceId: deviceIdOf(raw),
    publicKey: raw.toString('base64url'),
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    createdAt: new Date().toISOString(),
    deviceTokens: {},
  };
}

function identityText(data: IdentityFile): string {
  return `${JSON.stringify(data, null, 2)}\n`;
}

/** The identity file's content; `undefined` when there is none. Never follows a symlink; refuses a file others can read. */
function readIdentityText(path: string): string | undefined {
  let check;
  try {
    check = readPrivateFileSync(path, { label: 'the device identity', exposed: 'refuse' });
  } catch (error) {
    throw new GatewayError('identity', `cannot read the device identity ${path}: ${(error as Error).message}`, { cause: error });
  }
  if (check.state === 'missing') return undefined;
  if (check.state === 'insecure') {
    const alternative = check.problem === 'exposed' ? ' (or, if others may have copied the key, delete it to create a new identity; the gateway must then approve this device again)' : '';
    throw new GatewayError('identity', `${check.message}${alternative}`);
  }
  return check.text;
}

/** The identity stored at `path`; `undefined` when there is no file. */
function readIdentityFile(path: string): IdentityFile | undefined {
  const text = readIdentityText(path);
  if (text === undefined) return undefined;
  let parsed: IdentityFile;
  try {
    parsed = identityFileSchema.parse(JSON.parse(text));
  } catch (error) {
    throw new GatewayError('identity', `the device identity ${path} is damaged (${error instanceof z.ZodError ? error.issues[0]?.message ?? 'invalid' : 'not JSON'}); delete it to create a new identity (the gateway must then approve this device again)`, { cause: error });
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(parsed.privateKey);
  } catch (error) {
    throw new GatewayError('identity', `the device identity ${path} holds no readable private key; delete it to create a new identity`, { cause: error });
  }
  const raw = rawPublicKey(createPublicKey(privateKey));
  if (raw.toString('base64url') !== parsed.publicKey || deviceIdOf(raw) !== parsed.deviceId) {
    throw new GatewayError('identity', `the device identity ${path} is inconsistent (its key does not match its id); delete it to create a new identity`);
  }
  return parsed;
}

/**
 * Loads the Ed25519 device identity at `path`, creating it (0600, directory 0700) on first use.
 * The identity is what the gateway pairs, so it is never replaced silently: a damaged file is a
 * {@link GatewayError} `identity` telling the user to delete it. The file is never followed through
 * a symlink, and one that group or others can read (it holds the private key) is refused with the
 * `chmod 600` fix. Device tokens from `hello-ok` are kept in the same file.
 *
 * @example
 * const { identity, deviceTokens } = loadOrCreateDeviceIdentity(join(home, 'gateway-device.json'));
 */
export function loadOrCreateDeviceIdentity(path: string): DeviceIdentityFile {
  let data: IdentityFile;
  let created = false;
  const existing = readIdentityFile(path);
  if (existing) data = existing;
  else {
    const fresh = newIdentityFile();
    let linked: boolean;
    try {
      // Not created when another process created the file meanwhile; then its identity wins.
      linked = createPrivateFileExclusiveSync(path, identityText(fresh));
    } catch (error) {
      throw new GatewayError('identity', `cannot create the device identity ${path}: ${(error as Error).message}`, { cause: error });
    }
    if (linked) {
      data = fresh;
      created = true;
    } else {
      const raced = readIdentityFile(path);
      if (!raced) throw new GatewayError('identity', `the device identity ${path} disappeared while it was created`);
      data = raced;
    }
  }
  const privateKey = createPrivateKey(data.privateKey);
  const identity: DeviceIdentity = {
    deviceId: data.deviceId,
    publicKey: data.publicKey,
    sign: (payload) => sign(null, Buffer.from(payload, 'utf8'), privateKey).toString('base64url'),
  };
  const key = (gateway: string, role: GatewayRole) => `${role} ${gateway}`;
  const update = (change: (tokens: IdentityFile['deviceTokens']) => void) => {
    const latest = readIdentityFile(path);
    if (!latest) throw new GatewayError('identity', `the device identity ${path} was removed while in use`);
    if (latest.deviceId !== data.deviceId) throw new GatewayError('identity', `the device identity ${path} was replaced while in use`);
    change(latest.deviceTokens);
    writePrivateFileAtomicSync(path, identityText(latest));
    data = latest;
  };
  const deviceTokens: DeviceTokenStore = {
    load: (gateway, role) => data.deviceTokens[key(gateway, role)]?.token,
    save: (gateway, role, token) => {
      if (data.deviceTokens[key(gateway, role)]?.token === token) return;
      update((tokens) => {
        tokens[key(gateway, role)] = { token, savedAt: new Date().toISOString() };
      });
    },
    clear: (gateway, role) => {
      if (!data.deviceTokens[key(gateway, role)]) return;
      update((tokens) => {
        delete tokens[key(gateway, role)];
      });
    },
  };
  return { path, identity, deviceTokens, created };
}

/** A throwaway in-memory identity (tests, one-off probes). */
export function createEphemeralDeviceIdentity(): DeviceIdentity {
  const file = newIdentityFile();
  const privateKey = createPrivateKey(file.privateKey);
  return {
    deviceId: file.deviceId,
    publicKey: file.publicKey,
    sign: (payload) => sign(null, Buffer.from(payload, 'utf8'), privateKey).toString('base64url'),
  };
}
