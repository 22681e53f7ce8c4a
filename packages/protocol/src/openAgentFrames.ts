/**
 * Frames of OpenAgent's capability WebSocket (`client-capabilities/1`), the desktop client's side:
 * what capnode sends as the capability host and what it accepts from the server. JSON text only.
 */

/** The protocol name both sides put in `capability_hello` / `capability_hello_ack`. */
export const OPENAGENT_PROTOCOL = 'client-capabilities/1';

/** Calls a client runs at once; one more is answered `client_backpressure` (desktop `MAX_ACTIVE_TOOL_CALLS`). */
export const OPENAGENT_MAX_ACTIVE_CALLS = 32;

/** The server closes with this after another connection replaced this one; the client must not reconnect. */
export const OPENAGENT_CLOSE_CONNECTION_REPLACED = 4009;

/** The client closes with this when the server's registration or a call names another account. */
export const OPENAGENT_CLOSE_POLICY = 1008;

/** How a tool affects the computer; the most restrictive match wins (read_only < idempotent < mutating). */
export type OpenAgentClassification = 'read_only' | 'idempotent' | 'mutating';

/** One tool of a catalog server. */
export interface OpenAgentCatalogTool {
  readonly name: string;
  readonly description?: string;
  readonly input_schema?: Readonly<Record<string, unknown>>;
  readonly classification?: OpenAgentClassification;
  /** Per argument, per string value of it: the classification that value gives the call. */
  readonly classification_by_argument?: Readonly<Record<string, Readonly<Record<string, OpenAgentClassification>>>>;
}

/** One MCP server of the catalog (its name never holds `:`). */
export interface OpenAgentCatalogServer {
  readonly name: string;
  readonly version?: string;
  readonly instructions?: string;
  readonly tools: readonly OpenAgentCatalogTool[];
}

/** Client → server: the first frame of a connection. */
export interface OpenAgentHello {
  readonly type: 'capability_hello';
  readonly protocol: typeof OPENAGENT_PROTOCOL;
  readonly client_instance_id: string;
  readonly generation: number;
  readonly device_label: string;
  readonly network_id?: string;
  readonly servers: readonly OpenAgentCatalogServer[];
}

/** A tool call's error (a protocol-level failure, as opposed to a result with `isError`). */
export interface OpenAgentError {
  readonly code: string;
  readonly message: string;
  readonly data?: unknown;
}

/** Client → server frames. */
export type OpenAgentClientFrame =
  | OpenAgentHello
  | { readonly type: 'capability_catalog_update'; readonly generation: number; readonly servers: readonly OpenAgentCatalogServer[] }
  | { readonly type: 'capability_heartbeat'; readonly generation: number; readonly ts_ms?: number }
  | {
      readonly type: 'client_tool_result';
      readonly call_id: string;
      readonly generation: number;
      readonly result?: Readonly<Record<string, unknown>>;
      readonly error?: OpenAgentError;
    }
  | {
      readonly type: 'client_artifact_chunk';
      readonly call_id: string;
      readonly generation: number;
      readonly transfer_id: string;
      readonly seq: number;
      readonly data: string;
      readonly eof: boolean;
      readonly size?: number;
      readonly mime_type?: string;
      readonly sha256?: string;
    }
  | { readonly type: 'client_tool_event'; readonly generation: number; readonly event: Readonly<Record<string, unknown>> };

/** Server → client: the answer to `capability_hello`. */
export interface OpenAgentHelloAck {
  readonly type: 'capability_hello_ack';
  readonly protocol: string;
  readonly device_id: string;
  readonly account_id: string;
  readonly network_id?: string;
  readonly client_instance_id: string;
  readonly generation: number;
  readonly accepted: boolean;
  readonly reason?: string;
}

/** Server → client: run a tool. */
export interface OpenAgentToolCall {
  readonly type: 'client_tool_call';
  readonly call_id: string;
  readonly generation: number;
  readonly server: string;
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** Absolute epoch ms when > 1e12, else relative ms. */
  readonly deadline_ms: number;
  readonly session_id: string | null;
  readonly account_id: string;
  readonly network_id?: string;
  readonly idempotency_key: string;
  readonly arguments_sha256: string;
}

/** Server → client frames capnode understands. */
export type OpenAgentServerFrame =
  | OpenAgentHelloAck
  | { readonly type: 'capability_heartbeat_ack'; readonly generation: number; readonly ts_ms?: number }
  | OpenAgentToolCall
  | { readonly type: 'client_tool_cancel'; readonly call_id: string; readonly generation: number; readonly reason?: string }
  | { readonly type: 'client_tool_event_ack'; readonly generation: number; readonly shell_id: string; readonly accepted: boolean; readonly duplicate?: boolean }
  | { readonly type: 'pong' }
  | { readonly type: 'error'; readonly error?: unknown };

/** Why a server frame was refused: `invalid_json`, `invalid_frame` (shape) or `unknown_frame` (type). */
export type OpenAgentFrameErrorCode = 'invalid_json' | 'invalid_frame' | 'unknown_frame';

/** The outcome of {@link parseOpenAgentServerFrame}; `type` and `callId` are set when a refused frame had them. */
export type OpenAgentFrameParse =
  | { readonly ok: true; readonly frame: OpenAgentServerFrame }
  | { readonly ok: false; readonly code: OpenAgentFrameErrorCode; readonly message: string; readonly type?: string; readonly callId?: string };

const SHA256_HEX = /^[a-f0-9]{64}$/;

type Fields = Readonly<Record<string, unknown>>;
type Check = (frame: Fields) => string | undefined;

const isObject = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);
const nonEmpty = (...names: string[]): Check => (frame) => names.find((name) => typeof frame[name] !== 'string' || frame[name] === '');
const generation: Check = (frame) => (Number.isInteger(frame.generation) && (frame.generation as number) >= 1 ? undefined : 'generation');
const optionalString = (name: string): Check => (frame) => (frame[name] === undefined || typeof frame[name] === 'string' ? undefined : name);

/** The checks of each server frame type, in order; each names the first bad field. */
const SERVER_FRAMES: Readonly<Record<string, readonly Check[]>> = {
  capability_hello_ack: [
    nonEmpty('protocol', 'device_id', 'account_id', 'client_instance_id'),
    generation,
    optionalString('network_id'),
    optionalString('reason'),
    (frame) => (typeof frame.accepted === 'boolean' ? undefined : 'accepted'),
  ],
  capability_heartbeat_ack: [generation],
  client_tool_call: [
    nonEmpty('call_id', 'server', 'tool', 'account_id', 'idempotency_key'),
    generation,
    optionalString('network_id'),
    (frame) => (typeof frame.arguments_sha256 === 'string' && SHA256_HEX.test(frame.arguments_sha256) ? undefined : 'arguments_sha256'),
    (frame) => (isObject(frame.args) ? undefined : 'args'),
    (frame) => (typeof frame.deadline_ms === 'number' && Number.isFinite(frame.deadline_ms) ? undefined : 'deadline_ms'),
    (frame) => (frame.session_id === undefined || frame.session_id === null || typeof frame.session_id === 'string' ? undefined : 'session_id'),
  ],
  client_tool_cancel: [nonEmpty('call_id'), generation, optionalString('reason')],
  client_tool_event_ack: [nonEmpty('shell_id'), generation, (frame) => (typeof frame.accepted === 'boolean' ? undefined : 'accepted')],
  pong: [],
  error: [],
};

/**
 * Parses and validates one server text frame as the desktop client does: JSON, an object with a
 * `type`, then that type's fields (generation an integer ≥ 1, required strings non-empty,
 * `arguments_sha256` 64 lowercase hex, `args` an object, `deadline_ms` finite). Never throws; the
 * message names the bad field, never the frame's content.
 */
export function parseOpenAgentServerFrame(text: string): OpenAgentFrameParse {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, code: 'invalid_json', message: 'frame is not valid JSON' };
  }
  if (!isObject(value)) return { ok: false, code: 'invalid_frame', message: 'frame is not a JSON object' };
  const callId = typeof value.call_id === 'string' && value.call_id !== '' ? { callId: value.call_id } : {};
  if (typeof value.type !== 'string' || value.type === '') return { ok: false, code: 'invalid_frame', message: 'frame has no type', ...callId };
  const checks = Object.hasOwn(SERVER_FRAMES, value.type) ? SERVER_FRAMES[value.type] : undefined;
  if (!checks) return { ok: false, code: 'unknown_frame', message: `unknown frame type ${JSON.stringify(value.type.slice(0, 64))}`, ...callId };
  for (const check of checks) {
    const bad = check(value);
    if (bad !== undefined) return { ok: false, code: 'invalid_frame', message: `invalid ${value.type} frame: bad ${bad}`, type: value.type, ...callId };
  }
  return { ok: true, frame: value as unknown as OpenAgentServerFrame };
}

/** The rank of a classification: read_only 0 < idempotent 1 < mutating 2. */
function rank(classification: OpenAgentClassification): number {
  return classification === 'read_only' ? 0 : classification === 'idempotent' ? 1 : 2;
}

/**
 * A call's effective classification: the tool's (mutating when it declares none), raised by every
 * `classification_by_argument` entry whose argument holds a listed string value (the most restrictive wins).
 */
export function classifyOpenAgentCall(tool: Pick<OpenAgentCatalogTool, 'classification' | 'classification_by_argument'>, args: Readonly<Record<string, unknown>>): OpenAgentClassification {
  const base: OpenAgentClassification = tool.classification ?? 'mutating';
  const byArgument = tool.classification_by_argument;
  if (!byArgument) return base;
  let matched: OpenAgentClassification | undefined;
  for (const [argument, values] of Object.entries(byArgument)) {
    const value = args[argument];
    if (typeof value !== 'string' || !Object.hasOwn(values, value)) continue;
    const classification = values[value] as OpenAgentClassification;
    if (matched === undefined || rank(classification) > rank(matched)) matched = classification;
  }
  return matched ?? base;
}

/** The call's end time in epoch ms: `deadline_ms` above 1e12 is absolute, else relative to `now`; clamped to [now + 1 ms, now + 24 h]. */
export function openAgentDeadline(deadlineMs: number, now: number): number {
  const absolute = deadlineMs > 1e12 ? deadlineMs : now + deadlineMs;
  return Math.min(Math.max(absolute, now + 1), now + 24 * 3_600_000);
}
