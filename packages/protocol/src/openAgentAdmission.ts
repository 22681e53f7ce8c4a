import { OPENAGENT_MAX_ACTIVE_CALLS, type OpenAgentError, type OpenAgentToolCall } from './openAgentFrames.js';

/** Error codes the client answers a `client_tool_call` with before running it. */
export type OpenAgentAdmissionCode =
  | 'not_registered'
  | 'account_mismatch'
  | 'network_mismatch'
  | 'stale_generation'
  | 'duplicate_call'
  | 'client_backpressure'
  | 'arguments_hash_mismatch';

/** What the client knows when a call arrives. */
export interface OpenAgentAdmissionState {
  /** `capability_hello_ack` accepted on this connection. */
  readonly acknowledged: boolean;
  readonly accountId: string;
  readonly networkId?: string | undefined;
  readonly generation: number;
  /** Call ids running now. */
  readonly active: ReadonlySet<string>;
  /** Most calls at once (default {@link OPENAGENT_MAX_ACTIVE_CALLS}). */
  readonly maxActive?: number;
  /** The `arguments_sha256` of `args` in OpenAgent's canonical form; throwing means the args have none (NaN…). */
  readonly hash: (args: Readonly<Record<string, unknown>>) => string;
}

/** A refused call: the error to send, and whether the socket must then close with 1008. */
export interface OpenAgentRefusal {
  readonly error: OpenAgentError & { readonly code: OpenAgentAdmissionCode };
  readonly close: boolean;
}

/**
 * Checks a call in the desktop client's order: `not_registered`, `account_mismatch` (and close 1008),
 * `network_mismatch`, `stale_generation`, `duplicate_call`, `client_backpressure`, then
 * `arguments_hash_mismatch` with `{expected, actual}`. `undefined` admits the call; which tool it
 * names and consent are checked after.
 */
export function admitOpenAgentCall(call: OpenAgentToolCall, state: OpenAgentAdmissionState): OpenAgentRefusal | undefined {
  const refuse = (code: OpenAgentAdmissionCode, message: string, data?: unknown, close = false): OpenAgentRefusal => ({
    error: { code, message, ...(data === undefined ? {} : { data }) },
    close,
  });
  if (!state.acknowledged) return refuse('not_registered', 'Capability host is not registered');
  if (call.account_id !== state.accountId) return refuse('account_mismatch', 'Call is for another account', undefined, true);
  if ((call.network_id ?? undefined) !== (state.networkId ?? undefined)) return refuse('network_mismatch', 'Call is for another network');
  if (call.generation !== state.generation) return refuse('stale_generation', 'Call is for another generation', { expected: state.generation, actual: call.generation });
  if (state.active.has(call.call_id)) return refuse('duplicate_call', 'Call is already running');
  if (state.active.size >= (state.maxActive ?? OPENAGENT_MAX_ACTIVE_CALLS)) return refuse('client_backpressure', 'Too many calls are running on this client');
  let actual: string;
  try {
    actual = state.hash(call.args);
  } catch {
    return refuse('arguments_hash_mismatch', 'Arguments have no canonical form', { expected: call.arguments_sha256, actual: null });
  }
  if (actual !== call.arguments_sha256) return refuse('arguments_hash_mismatch', 'Arguments do not match arguments_sha256', { expected: call.arguments_sha256, actual });
  return undefined;
}
