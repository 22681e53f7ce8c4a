import { z } from 'zod';

/** The OpenClaw gateway protocol version capnode speaks. */
export const GATEWAY_PROTOCOL_VERSION = 4;

/** Largest frame either side may send before the handshake completed (`hello-ok`), in bytes. */
export const GATEWAY_PRE_CONNECT_MAX_BYTES = 64 * 1024;

/** `client.id` values the gateway accepts that capnode uses: `node-host` for nodes, `cli` / `test` for operators. */
export const gatewayClientIdSchema = z.enum(['node-host', 'cli', 'test', 'gateway-client']);
export type GatewayClientId = z.infer<typeof gatewayClientIdSchema>;

/** `client.mode` values the gateway accepts. */
export const gatewayClientModeSchema = z.enum(['webchat', 'cli', 'ui', 'backend', 'node', 'worker', 'probe', 'test']);
export type GatewayClientMode = z.infer<typeof gatewayClientModeSchema>;

export const gatewayRoleSchema = z.enum(['node', 'operator']);
export type GatewayRole = z.infer<typeof gatewayRoleSchema>;

/** Operator scopes; the gateway grants a subset of what the client asks for. */
export const GATEWAY_OPERATOR_SCOPES = ['operator.read', 'operator.write', 'operator.approvals', 'operator.pairing', 'operator.admin'] as const;
export type GatewayOperatorScope = (typeof GATEWAY_OPERATOR_SCOPES)[number];

/** The `error` of a failed response: `details.code` carries the precise reason (e.g. `AUTH_TOKEN_MISMATCH`). */
export const gatewayErrorSchema = z.looseObject({
  code: z.string(),
  message: z.string(),
  details: z.unknown().optional(),
  retryable: z.boolean().optional(),
  retryAfterMs: z.number().nonnegative().optional(),
});
export type GatewayErrorShape = z.infer<typeof gatewayErrorSchema>;

const frameId = z.string().min(1).max(256);

/** `{type:"req", id, method, params?}` */
export const gatewayRequestFrameSchema = z.looseObject({
  type: z.literal('req'),
  id: frameId,
  method: z.string().min(1).max(256),
  params: z.unknown().optional(),
});
export type GatewayRequestFrame = z.infer<typeof gatewayRequestFrameSchema>;

/** `{type:"res", id, ok, payload?, error?}`; a failed response always carries `error`. */
export const gatewayResponseFrameSchema = z
  .looseObject({
    type: z.literal('res'),
    id: frameId,
    ok: z.boolean(),
    payload: z.unknown().optional(),
    error: gatewayErrorSchema.optional(),
  })
  .refine((frame) => frame.ok || frame.error !== undefined, { message: 'a failed response needs error', path: ['error'] });
export type GatewayResponseFrame = z.infer<typeof gatewayResponseFrameSchema>;

/** `{type:"event", event, payload?, seq?, stateVersion?}` */
export const gatewayEventFrameSchema = z.looseObject({
  type: z.literal('event'),
  event: z.string().min(1).max(256),
  payload: z.unknown().optional(),
  seq: z.number().int().optional(),
  stateVersion: z.unknown().optional(),
});
export type GatewayEventFrame = z.infer<typeof gatewayEventFrameSchema>;

/** Any frame of the gateway protocol. */
export const gatewayFrameSchema = z.union([gatewayRequestFrameSchema, gatewayResponseFrameSchema, gatewayEventFrameSchema]);
export type GatewayFrame = GatewayRequestFrame | GatewayResponseFrame | GatewayEventFrame;

/** Payload of the `connect.challenge` event the gateway sends first. */
export const connectChallengeSchema = z.looseObject({
  nonce: z.string().min(1).max(512),
  ts: z.number().int().nonnegative(),
});
export type ConnectChallenge = z.infer<typeof connectChallengeSchema>;

/** `device` of `connect`: the Ed25519 identity and its signature over the challenge (see {@link buildDeviceAuthPayload}). */
export const connectDeviceSchema = z.object({
  /** hex(sha256(raw public key)) */
  id: z.string().regex(/^[0-9a-f]{64}$/),
  /** base64url of the raw 32-byte public key */
  publicKey: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  /** base64url of the 64-byte Ed25519 signature */
  signature: z.string().regex(/^[A-Za-z0-9_-]{86}$/),
  signedAt: z.number().int().nonnegative(),
  nonce: z.string().min(1),
});
export type ConnectDevice = z.infer<typeof connectDeviceSchema>;

/** Params of the `connect` request (the client's first frame). */
export const connectParamsSchema = z.object({
  minProtocol: z.number().int().positive(),
  maxProtocol: z.number().int().positive(),
  client: z.object({
    id: gatewayClientIdSchema,
    version: z.string().min(1).max(128),
    platform: z.string().min(1).max(128),
    mode: gatewayClientModeSchema,
    displayName: z.string().min(1).max(256).optional(),
    deviceFamily: z.string().min(1).max(128).optional(),
    instanceId: z.string().min(1).max(256).optional(),
  }),
  role: gatewayRoleSchema,
  scopes: z.array(z.string().min(1)),
  caps: z.array(z.string().min(1)).optional(),
  commands: z.array(z.string().min(1)).optional(),
  permissions: z.record(z.string(), z.boolean()).optional(),
  auth: z
    .object({
      token: z.string().min(1).optional(),
      password: z.string().min(1).optional(),
      deviceToken: z.string().min(1).optional(),
    })
    .optional(),
  locale: z.string().min(1).optional(),
  userAgent: z.string().min(1).optional(),
  device: connectDeviceSchema.optional(),
});
export type ConnectParams = z.infer<typeof connectParamsSchema>;

/** The `hello-ok` payload answering a successful `connect`. */
export const helloOkSchema = z.looseObject({
  type: z.literal('hello-ok'),
  protocol: z.number().int(),
  server: z.looseObject({ version: z.string(), connId: z.string() }),
  features: z.looseObject({ methods: z.array(z.string()), events: z.array(z.string()) }).optional(),
  snapshot: z.unknown().optional(),
  auth: z.looseObject({
    role: gatewayRoleSchema,
    scopes: z.array(z.string()),
    /** Per-device token to present (as `auth.deviceToken`) on later connects. */
    deviceToken: z.string().min(1).optional(),
    method: z.string().optional(),
  }),
  policy: z.looseObject({
    /** Largest frame after the handshake, in bytes. */
    maxPayload: z.number().int().positive(),
    maxBufferedBytes: z.number().int().positive().optional(),
    /** The gateway sends a `tick` event this often; 2 × this without one means the connection is dead. */
    tickIntervalMs: z.number().int().positive(),
  }),
  /**
   * Hosted plugin surfaces by name (`canvas` → `https://gw/__openclaw__/cap/<token>`); capability-scoped
   * URLs expire. A malformed map is dropped rather than failing the handshake.
   */
  pluginSurfaceUrls: z.record(z.string(), z.string()).optional().catch(undefined),
});
export type HelloOk = z.infer<typeof helloOkSchema>;

/** Payload of the `tick` keepalive event. */
export const tickEventSchema = z.looseObject({ ts: z.number().optional() });

/** Payload of the `node.invoke.request` event a node receives. */
export const nodeInvokeRequestSchema = z.looseObject({
  id: z.string().min(1).max(256),
  nodeId: z.string().min(1),
  command: z.string().min(1).max(256),
  paramsJSON: z.string().nullable().optional(),
  params: z.unknown().optional(),
  timeoutMs: z.number().nonnegative().nullable().optional(),
  idempotencyKey: z.string().min(1).max(512).nullable().optional(),
});
export type NodeInvokeRequest = z.infer<typeof nodeInvokeRequestSchema>;

/** Payload of the `node.invoke.cancel` event: the caller gave up on `invokeId`. */
export const nodeInvokeCancelSchema = z.looseObject({
  invokeId: z.string().min(1),
  nodeId: z.string().optional(),
});
export type NodeInvokeCancel = z.infer<typeof nodeInvokeCancelSchema>;

/** Params of the `node.invoke.result` request a node sends back. */
export const nodeInvokeResultParamsSchema = z.object({
  id: z.string().min(1),
  nodeId: z.string().min(1),
  ok: z.boolean(),
  payload: z.unknown().optional(),
  payloadJSON: z.string().optional(),
  error: z.object({ code: z.string().optional(), message: z.string().optional() }).optional(),
});
export type NodeInvokeResultParams = z.infer<typeof nodeInvokeResultParamsSchema>;

/** Params of the operator's `node.invoke` request. */
export const nodeInvokeParamsSchema = z.object({
  nodeId: z.string().min(1),
  command: z.string().min(1),
  params: z.unknown().optional(),
  timeoutMs: z.number().int().positive().optional(),
  idempotencyKey: z.string().min(1),
});
export type NodeInvokeParams = z.infer<typeof nodeInvokeParamsSchema>;

/** Payload of `node.pair.resolved`. */
export const nodePairResolvedSchema = z.looseObject({
  requestId: z.string(),
  nodeId: z.string(),
  decision: z.string(),
  ts: z.number().optional(),
});
export type NodePairResolved = z.infer<typeof nodePairResolvedSchema>;

/** One entry of `node.list`. */
export const gatewayNodeEntrySchema = z.looseObject({
  nodeId: z.string(),
  displayName: z.string().optional(),
  platform: z.string().optional(),
  caps: z.array(z.string()).optional(),
  commands: z.array(z.string()).optional(),
  approvalState: z.string().optional(),
  pendingRequestId: z.string().optional(),
  pendingDeclaredCommands: z.array(z.string()).optional(),
  paired: z.boolean().optional(),
  connected: z.boolean().optional(),
});
export type GatewayNodeEntry = z.infer<typeof gatewayNodeEntrySchema>;

/** Payload of `node.list`. */
export const nodeListResultSchema = z.looseObject({ nodes: z.array(gatewayNodeEntrySchema) });

/** One pending request of `node.pair.list`. */
export const nodePairRequestSchema = z.looseObject({
  requestId: z.string(),
  nodeId: z.string(),
  commands: z.array(z.string()).optional(),
  caps: z.array(z.string()).optional(),
  requiredApproveScopes: z.array(z.string()).optional(),
});
export type NodePairRequest = z.infer<typeof nodePairRequestSchema>;

/** Payload of `node.pair.list`. */
export const nodePairListResultSchema = z.looseObject({ pending: z.array(nodePairRequestSchema) });

/** Params of the optional `node.event` request a node may send. */
export const nodeEventParamsSchema = z.object({
  event: z.string().min(1),
  payload: z.unknown().optional(),
  payloadJSON: z.string().optional(),
});

/** What a device signs: every field of the v3 payload (v2 uses the first nine). */
export interface DeviceAuthPayloadFields {
  readonly deviceId: string;
  readonly clientId: string;
  readonly clientMode: string;
  readonly role: string;
  readonly scopes: readonly string[];
  /** The challenge `ts`. */
  readonly signedAtMs: number;
  /** The auth token sent in `connect` (`auth.token`, else `auth.deviceToken`); empty when none. */
  readonly token?: string | undefined;
  /** The challenge `nonce`. */
  readonly nonce: string;
  readonly platform?: string | undefined;
  readonly deviceFamily?: string | undefined;
}

/** Trims and lower-cases ASCII letters only, as the gateway does for the v3 metadata fields. */
function lowerAscii(value: string | undefined): string {
  return value === undefined ? '' : value.trim().replace(/[A-Z]/g, (letter) => letter.toLowerCase());
}

/**
 * The UTF-8 text a device signs with Ed25519 in `connect`:
 * `v3|id|client.id|client.mode|role|scopes joined by ","|signedAt|token|nonce|lower(platform)|lower(deviceFamily)`.
 *
 * @example
 * buildDeviceAuthPayload({ deviceId, clientId: 'node-host', clientMode: 'node', role: 'node', scopes: [],
 *   signedAtMs: challenge.ts, token, nonce: challenge.nonce, platform: 'linux', deviceFamily: 'Linux' });
 * // 'v3|<id>|node-host|node|node||1795971418492|<token>|<nonce>|linux|linux'
 */
export function buildDeviceAuthPayload(fields: DeviceAuthPayloadFields, version: 'v3' | 'v2' = 'v3'): string {
  const base = [version, fields.deviceId, fields.clientId, fields.clientMode, fields.role, fields.scopes.join(','), String(fields.signedAtMs), fields.token ?? '', fields.nonce];
  if (version === 'v2') return base.join('|');
  return [...base, lowerAscii(fields.platform), lowerAscii(fields.deviceFamily)].join('|');
}

/** The outcome of {@link parseGatewayFrame}. */
export type GatewayFrameParse = { readonly ok: true; readonly frame: GatewayFrame } | { readonly ok: false; readonly reason: string };

/**
 * Parses one text frame: JSON, then the frame schema. Never throws; a malformed frame gives a
 * one-line `reason` (no frame content), so a peer's garbage cannot crash or flood the reader.
 */
export function parseGatewayFrame(text: string): GatewayFrameParse {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'frame is not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: 'frame is not a JSON object' };
  const type = (value as { type?: unknown }).type;
  const schema = type === 'req' ? gatewayRequestFrameSchema : type === 'res' ? gatewayResponseFrameSchema : type === 'event' ? gatewayEventFrameSchema : undefined;
  if (!schema) return { ok: false, reason: `unknown frame type ${JSON.stringify(typeof type === 'string' ? type.slice(0, 32) : typeof type)}` };
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, reason: `invalid ${String(type)} frame: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'schema mismatch'}` };
  }
  return { ok: true, frame: parsed.data as GatewayFrame };
}

/** `error.details.code` when it is a string (the precise reason, e.g. `AUTH_TOKEN_MISMATCH`), else `undefined`. */
export function gatewayErrorDetailCode(error: GatewayErrorShape | undefined): string | undefined {
  const details = error?.details;
  if (typeof details !== 'object' || details === null) return undefined;
  const code = (details as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}
