import type { ClientConnection, Invoker } from '@capnode/capabilities';
import { toCallToolResult } from '@capnode/mcp-server';
import { openAgentArgumentsSha256 } from '@capnode/protocol/node';
import { admitOpenAgentCall, classifyOpenAgentCall, openAgentDeadline, type OpenAgentError, type OpenAgentToolCall } from '@capnode/protocol/openagent';
import { armDeadline, type LogLevel } from '@capnode/toolkit';
import type { OpenAgentCatalog } from './catalog.js';
import type { ChannelSession, OpenAgentChannelConfig } from './channelTypes.js';
import { artifactChunks, prepareArtifacts } from './artifacts.js';
import { OpenAgentChannelError } from './channelError.js';

/** What a call runs through. */
export interface CallRunnerOptions {
  readonly config: OpenAgentChannelConfig;
  readonly invoker: Invoker;
  readonly catalog: () => OpenAgentCatalog;
  /** The device-level consent switch, re-read at admission and right before dispatch. */
  readonly consentOn: () => boolean;
  /** Runs the admitted call; the ledger wraps `run` to replay, refuse or mark outcomes. */
  readonly execute?: ExecuteCall;
  readonly log: (level: LogLevel, message: string) => void;
  /** The channel as the calls' client connection (`InvocationRequest.connection`): where a shell session reports `shell_completed`. */
  readonly connection?: ClientConnection;
}

/** How one admitted call runs: `run` invokes the command; the result is what goes back (or `undefined`: send nothing). */
export type ExecuteCall = (call: AdmittedCall, run: () => Promise<CallOutcome>) => Promise<CallOutcome>;

/** An admitted call with what its execution needs to know. */
export interface AdmittedCall {
  readonly frame: OpenAgentToolCall;
  readonly command: string;
  readonly mutating: boolean;
  /** Classified `read_only` for these arguments: safe to run again, kept out of the ledger. */
  readonly readOnly: boolean;
  readonly signal: AbortSignal;
  readonly deadline: number;
}

/** What a call ends with: a result, a protocol error, or nothing (the socket is dropped instead). */
export type CallOutcome =
  | { readonly kind: 'result'; readonly result: Record<string, unknown> }
  | { readonly kind: 'error'; readonly error: OpenAgentError }
  | { readonly kind: 'ambiguous'; readonly reason: string };

const CANCELLED = 'cancelled';

function errorOutcome(code: string, message: string, data?: unknown): CallOutcome {
  return { kind: 'error', error: { code, message, ...(data === undefined ? {} : { data }) } };
}

/** The call's command through the one pipeline, as transport `openagent` with the account and device as caller. */
async function invokeCommand(call: AdmittedCall, options: CallRunnerOptions): Promise<CallOutcome> {
  const { config, invoker } = options;
  const request = {
    command: call.command,
    args: call.frame.args,
    transport: 'openagent' as const,
    requestId: call.frame.call_id,
    caller: `openagent:${config.accountId}/${config.deviceId}`,
    timeoutMs: Math.max(1, call.deadline - Date.now()),
    ...(options.connection ? { connection: options.connection } : {}),
  };
  const outcome = await invoker.invoke(request, { signal: call.signal });
  if (call.signal.aborted) return { kind: 'ambiguous', reason: String(call.signal.reason ?? CANCELLED) };
  const result = toCallToolResult(outcome.result) as Record<string, unknown>;
  const meta = { ...(result._meta as Record<string, unknown> | undefined), executionHost: { kind: 'client', device_label: config.deviceLabel, device_id: config.deviceId } };
  return { kind: 'result', result: { ...result, _meta: meta } };
}

/** Streams the result's large content as artifact chunks, then the result itself; each chunk waits for the socket. */
async function sendWithArtifacts(call: AdmittedCall, session: ChannelSession, result: Record<string, unknown>): Promise<void> {
  const { frame } = call;
  const prepared = prepareArtifacts(result, frame.call_id);
  for (const artifact of prepared.artifacts) {
    for (const chunk of artifactChunks(artifact, frame.call_id, frame.generation)) await session.sendEncoded(chunk, { signal: call.signal });
  }
  await session.send({ type: 'client_tool_result', call_id: frame.call_id, generation: frame.generation, result: prepared.result });
}

/** Sends what a call ended with; an ambiguous end of a mutating call sends nothing and drops the socket. */
async function deliver(call: AdmittedCall, session: ChannelSession, outcome: CallOutcome, sendResult: (result: Record<string, unknown>) => Promise<void>): Promise<void> {
  const { frame } = call;
  if (outcome.kind === 'ambiguous') {
    if (call.mutating) {
      session.terminate(`mutating call ${frame.call_id} ended without a known outcome (${outcome.reason}); no result sent`);
      return;
    }
    await session.send({ type: 'client_tool_result', call_id: frame.call_id, generation: frame.generation, error: { code: CANCELLED, message: outcome.reason.slice(0, 200) } });
    return;
  }
  if (outcome.kind === 'error') {
    await session.send({ type: 'client_tool_result', call_id: frame.call_id, generation: frame.generation, error: outcome.error });
    return;
  }
  await sendResult(outcome.result);
}

/**
 * Runs one `client_tool_call`: admission in the desktop client's order, consent, the tool's lookup,
 * the deadline and cancel, the pipeline, then the result (or the ambiguity rule's silence).
 */
export async function runOpenAgentCall(frame: OpenAgentToolCall, session: ChannelSession, options: CallRunnerOptions): Promise<void> {
  const { config } = options;
  const refusal = admitOpenAgentCall(frame, {
    acknowledged: session.acknowledged,
    accountId: config.accountId,
    networkId: config.networkId,
    generation: session.generation,
    active: new Set(session.active.keys()),
    hash: openAgentArgumentsSha256,
  });
  const reply = (error: OpenAgentError) => session.send({ type: 'client_tool_result', call_id: frame.call_id, generation: frame.generation, error });
  if (refusal) {
    await reply(refusal.error).catch(() => undefined);
    if (refusal.close) session.close(1008, 'Capability account mismatch');
    return;
  }
  const controller = new AbortController();
  const catalog = options.catalog();
  const target = catalog.resolve(frame.server, frame.tool);
  const classification = typeof target === 'string' ? 'mutating' : classifyOpenAgentCall(target.tool, frame.args);
  const mutating = classification === 'mutating';
  session.active.set(frame.call_id, { controller, mutating, startedAt: Date.now() });
  session.changed();
  const deadline = openAgentDeadline(frame.deadline_ms, Date.now());
  const timer = armDeadline({ timeoutMs: deadline - Date.now() }, () => controller.abort('Client tool deadline elapsed'));
  try {
    let outcome: CallOutcome;
    if (!options.consentOn()) outcome = errorOutcome('consent_required', 'Local tools are disabled on this device');
    else if (typeof target === 'string') outcome = errorOutcome(target, target === 'tool_not_found' ? `No tool ${frame.tool} on server ${frame.server}` : `The tool ${frame.tool} needs a consent that is off on this device`);
    else {
      const call: AdmittedCall = { frame, command: target.command, mutating, readOnly: classification === 'read_only', signal: controller.signal, deadline };
      const run = () => (options.consentOn() ? invokeCommand(call, options) : Promise.resolve(errorOutcome('consent_required', 'Local tools are disabled on this device')));
      outcome = await (options.execute ? options.execute(call, run) : run());
      await deliver(call, session, outcome, (result) => sendWithArtifacts(call, session, result));
      return;
    }
    await reply((outcome as Extract<CallOutcome, { kind: 'error' }>).error);
  } catch (error) {
    if (error instanceof OpenAgentChannelError && error.code === 'capability_transport_lost') return;
    if (error instanceof OpenAgentChannelError) {
      await reply({ code: error.code, message: error.message }).catch(() => undefined);
      return;
    }
    options.log('error', `openagent: call ${frame.call_id}: ${(error as Error).message}`);
    await reply({ code: 'client_tool_error', message: 'The local tool failed' }).catch(() => undefined);
  } finally {
    timer.clear();
    session.active.delete(frame.call_id);
    session.changed();
  }
}
