import type { GatewayRole } from '@capnode/protocol/gateway';

/**
 * An Ed25519 device identity: the id and public key the gateway pairs, and a signer for the
 * handshake payload. `loadOrCreateDeviceIdentity` from `@capnode/gateway-bridge/node` keeps one in a
 * 0600 file; tests may pass an in-memory one.
 */
export interface DeviceIdentity {
  /** hex(sha256(raw 32-byte public key)); the gateway's node id for a node. */
  readonly deviceId: string;
  /** base64url of the raw 32-byte public key. */
  readonly publicKey: string;
  /** base64url Ed25519 signature of the UTF-8 `payload`. */
  sign(payload: string): string | Promise<string>;
}

/** Keeps the per-device token `hello-ok` hands out, so later connects present it. */
export interface DeviceTokenStore {
  load(gateway: string, role: GatewayRole): string | undefined;
  save(gateway: string, role: GatewayRole, token: string): void;
  /** Forgets a token the gateway no longer accepts. */
  clear(gateway: string, role: GatewayRole): void;
}

/** A {@link DeviceTokenStore} in memory. */
export function createMemoryDeviceTokenStore(): DeviceTokenStore {
  const tokens = new Map<string, string>();
  const key = (gateway: string, role: GatewayRole) => `${role} ${gateway}`;
  return {
    load: (gateway, role) => tokens.get(key(gateway, role)),
    save: (gateway, role, token) => void tokens.set(key(gateway, role), token),
    clear: (gateway, role) => void tokens.delete(key(gateway, role)),
  };
}
