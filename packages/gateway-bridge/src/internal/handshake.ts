import {
  GATEWAY_PROTOCOL_VERSION,
  buildDeviceAuthPayload,
  helloOkSchema,
  type ConnectParams,
  type GatewayErrorShape,
  type GatewayResponseFrame,
  type GatewayRole,
  type HelloOk,
} from '@capnode/protocol/gateway';
import type { GatewayClientInfo, GatewayDeclaration } from '../connection/clientContract.js';
import { GatewayError } from '../errors.js';
import type { DeviceIdentity } from '../connection/identity.js';
import { classifyConnectError } from './connectErrors.js';

/** What the `connect` request is built from. */
export interface ConnectInput {
  readonly role: GatewayRole;
  readonly scopes: readonly string[];
  readonly client: GatewayClientInfo;
  readonly token?: string | undefined;
  readonly password?: string | undefined;
  /** The device token kept from an earlier `hello-ok`, if any. */
  readonly deviceToken?: string | undefined;
  readonly declaration?: GatewayDeclaration | undefined;
  readonly identity?: DeviceIdentity | undefined;
  readonly locale?: string | undefined;
  readonly userAgent?: string | undefined;
}

/**
 * The `connect` params for a challenge: protocol, client, role and scopes, the declaration, auth,
 * and the device signature over the v3 payload (the gateway verifies it against `auth.token` when
 * present, else `auth.deviceToken`).
 */
export async function buildConnectParams(input: ConnectInput, challenge: { readonly nonce: string; readonly ts: number }): Promise<ConnectParams> {
  const { client, role, declaration } = input;
  const auth: NonNullable<ConnectParams['auth']> = {
    ...(input.token ? { token: input.token } : {}),
    ...(input.password ? { password: input.password } : {}),
    ...(input.deviceToken ? { deviceToken: input.deviceToken } : {}),
  };
  const scopes = [...input.scopes];
  const params: ConnectParams = {
    minProtocol: GATEWAY_PROTOCOL_VERSION,
    maxProtocol: GATEWAY_PROTOCOL_VERSION,
    client: {
      id: client.id,
      version: client.version,
      platform: client.platform,
      mode: client.mode,
      ...(client.displayName ? { displayName: client.displayName } : {}),
      ...(client.deviceFamily ? { deviceFamily: client.deviceFamily } : {}),
      ...(client.instanceId ? { instanceId: client.instanceId } : {}),
    },
    role,
    scopes,
    ...(declaration ? { caps: [...declaration.caps], commands: [...declaration.commands] } : {}),
    ...(declaration?.permissions ? { permissions: { ...declaration.permissions } } : {}),
    ...(Object.keys(auth).length ? { auth } : {}),
    ...(input.locale ? { locale: input.locale } : {}),
    ...(input.userAgent ? { userAgent: input.userAgent } : {}),
  };
  if (input.identity) {
    const payload = buildDeviceAuthPayload({
      deviceId: input.identity.deviceId,
      clientId: client.id,
      clientMode: client.mode,
      role,
      scopes,
      signedAtMs: challenge.ts,
      token: auth.token ?? auth.deviceToken,
      nonce: challenge.nonce,
      platform: client.platform,
      deviceFamily: client.deviceFamily,
    });
    const signature = await input.identity.sign(payload);
    params.device = { id: input.identity.deviceId, publicKey: input.identity.publicKey, signature, signedAt: challenge.ts, nonce: challenge.nonce };
  }
  return params;
}

/** How the gateway answered `connect`. */
export type HandshakeOutcome =
  | { readonly ok: true; readonly hello: HelloOk }
  | {
      readonly ok: false;
      readonly failure: GatewayError;
      /** How to close the socket. */
      readonly close: { readonly code: number; readonly reason: string };
      /** Set when the gateway waits for its owner to approve this device. */
      readonly pairingRequestId?: string;
      /** The kept device token was refused: forget it and reconnect at once. */
      readonly deviceTokenRejected?: boolean;
    };

/** Reads the `connect` response: a `hello-ok` of the protocol capnode speaks, or why not. */
export function readHandshakeResponse(frame: GatewayResponseFrame, context: { readonly url: string; readonly role: GatewayRole; readonly sentDeviceToken: boolean }): HandshakeOutcome {
  const { url } = context;
  if (!frame.ok) {
    const failure = classifyConnectError(frame.error as GatewayErrorShape, context);
    const details = frame.error?.details as { requestId?: unknown } | undefined;
    return {
      ok: false,
      failure,
      close: { code: 1000, reason: 'connect refused' },
      ...(failure.code === 'pairing_required' && typeof details?.requestId === 'string' ? { pairingRequestId: details.requestId } : {}),
      ...(failure.detailCode === 'DEVICE_TOKEN_REJECTED' ? { deviceTokenRejected: true } : {}),
    };
  }
  const parsed = helloOkSchema.safeParse(frame.payload);
  if (!parsed.success) {
    const failure = new GatewayError('invalid_response', `The gateway at ${url} answered connect with a hello-ok that protocol ${GATEWAY_PROTOCOL_VERSION} does not describe; is it an OpenClaw gateway of a supported version?`, { cause: parsed.error });
    return { ok: false, failure, close: { code: 1002, reason: 'invalid hello-ok' } };
  }
  if (parsed.data.protocol !== GATEWAY_PROTOCOL_VERSION) {
    const failure = new GatewayError('protocol_mismatch', `The gateway at ${url} chose protocol ${parsed.data.protocol}; capnode speaks ${GATEWAY_PROTOCOL_VERSION}. Update capnode or the gateway.`);
    return { ok: false, failure, close: { code: 1002, reason: 'protocol mismatch' } };
  }
  return { ok: true, hello: parsed.data };
}
