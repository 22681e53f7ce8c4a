import type { InvocationOutcome, Invoker } from '@capnode/capabilities';
import { MAX_ARGUMENTS_DEPTH, argumentsHash, exceedsJsonDepth } from '@capnode/protocol';
import { nodeInvokeRequestSchema, type NodeInvokeRequest, type NodeInvokeResultParams } from '@capnode/protocol/gateway';
import type { GatewayClient, GatewayLogLevel } from '../connection/clientContract.js';
import { isGatewayError } from '../errors.js';
import type { InvokeLedger } from '../gatewayNode/invokeLedger.js';
import { serveExecApprovalsRoute } from './execApprovalsSnapshot.js';
import { gatewayErrorCode } from './gatewayCodes.js';
import { fingerprintArgs } from './invokeFingerprint.js';
import type { PublishedMcpTool } from '../gatewayNode/nodePublisher.js';
import { isPlainObject } from '@capnode/toolkit';

/** `mcp.tools.call.v1`: how a gateway calls a node-hosted MCP tool. */
const MCP_CALL_COMMAND = 'mcp.tools.call.v1';

/**
 * The `node.invoke.result` of an `mcp.tools.call.v1` call: a success is the MCP `CallToolResult`
 * (content, and `structuredContent` when the tool gave it); a refusal or tool error keeps the
 * pipeline's code as the node error (see {@link toInvokeResult}).
 */
export function toMcpInvokeResult(id: string, nodeId: string, outcome: InvocationOutcome): NodeInvokeResultParams {
  const { result } = outcome;
  if (!result.ok) return toInvokeResult(id, nodeId, outcome);
  return { id, nodeId, ok: true, payload: { content: result.content, ...(result.structured ? { structuredContent: result.structured } : {}) } };
}

/** The parts of `mcp.tools.call.v1` params: `server`, `tool` (strings) and `arguments` (an object, default `{}`). */
function mcpCallParams(args: unknown): { readonly server: string; readonly tool: string; readonly arguments: Record<string, unknown> } | undefined {
  if (!isPlainObject(args) || typeof args.server !== 'string' || typeof args.tool !== 'string') return undefined;
  const callArgs = args.arguments ?? {};
  if (!isPlainObject(callArgs)) return undefined;
  return { server: args.server, tool: args.tool, arguments: callArgs };
}

/** The error a node answers when `maxConcurrent` invokes already run (as OpenClaw's own nodes do). */
export const GATEWAY_NODE_BUSY_MESSAGE = 'node busy, retry';

/**
 * The `node.invoke.result` params for an outcome of the pipeline. Failure codes in the gateway's
 * spelling: a command's own `data.code` (e.g. `LOCATION_DISABLED`) passes through, `consent_required`
 * is `PERMISSION_REQUIRED`, `unavailable` `UNAVAILABLE`, `payload_too_large` `PAYLOAD_TOO_LARGE`,
 * any other code upper-cased.
 */
export function toInvokeResult(id: string, nodeId: string, outcome: InvocationOutcome): NodeInvokeResultParams {
  const { result } = outcome;
  if (!result.ok) return { id, nodeId, ok: false, error: { code: gatewayErrorCode(result.error), message: result.error.message } };
  return { id, nodeId, ok: true, payload: result.structured ?? { content: result.content } };
}

function execApprovalsRouteCommand(name: string | undefined): 'system.execApprovals.get' | 'system.execApprovals.set' | undefined {
  return name === 'system.execApprovals.get' || name === 'system.execApprovals.set' ? name : undefined;
}

/**
 * The error code a node answers for an invoke of a command it did not declare: the gateway's own
 * code for "node command not allowed", so callers see the same refusal whichever side made it.
 */
const NOT_DECLARED_CODE = 'INVALID_REQUEST';

function notDeclaredMessage(command: string): string {
  return `node command not allowed: ${JSON.stringify(command.slice(0, 200))} is not declared by this node`;
}

function errorResult(id: string, nodeId: string, code: string, message: string): NodeInvokeResultParams {
  return { id, nodeId, ok: false, error: { code, message } };
}

type ParsedArgs = { readonly ok: true; readonly args: unknown } | { readonly ok: false; readonly message: string };

function invokeArgs(request: NodeInvokeRequest): ParsedArgs {
  if (typeof request.paramsJSON === 'string') {
    try {
      return { ok: true, args: JSON.parse(request.paramsJSON) ?? {} };
    } catch {
      return { ok: false, message: 'paramsJSON is not valid JSON' };
    }
  }
  return { ok: true, args: request.params ?? {} };
}

/** What the dispatcher needs from its node. */
export interface InvokeDispatchContext {
  readonly nodeId: string;
  readonly url: string;
  readonly invoker: Invoker;
  /** Closed with the node, which aborts every run it holds. */
  readonly ledger: InvokeLedger<NodeInvokeResultParams>;
  client(): GatewayClient;
  /** Exactly the names the current connection declared. */
  declaredNames(): ReadonlySet<string>;
  /** The published node-hosted MCP tool for `mcp.tools.call.v1` params; absent when the node publishes none. */
  mcpTool?(server: string, tool: string): PublishedMcpTool | undefined;
  /** An invoke addressed to this node arrived (so the gateway approved it). */
  onInvoke(): void;
  emitStatus(): void;
  closed(): boolean;
  log(level: GatewayLogLevel, message: string): void;
}

/**
 * Answers `node.invoke.request` events: checks the request (addressee, declared name, params),
 * runs it through the ledger (at most once per idempotency key, busy past the concurrency limit)
 * and the shared pipeline, and sends `node.invoke.result` (a result over the gateway's payload
 * limit becomes `PAYLOAD_TOO_LARGE`).
 */
export function createInvokeDispatcher(context: InvokeDispatchContext): { onInvokeRequest(payload: unknown): Promise<void> } {
  const { log } = context;
  const sendResult = async (params: NodeInvokeResultParams): Promise<void> => {
    try {
      await context.client().request('node.invoke.result', params, { waitForConnection: false });
    } catch (error) {
      if (isGatewayError(error) && error.code === 'payload_too_large' && params.ok) {
        log('warning', `result of invoke ${params.id} is too large for the gateway: ${error.message}`);
        await sendResult(errorResult(params.id, params.nodeId, 'PAYLOAD_TOO_LARGE', `the result is larger than the gateway accepts (${error.message})`));
        return;
      }
      log('warning', `could not send the result of invoke ${params.id}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  return {
    async onInvokeRequest(payload) {
      const admitted = await admitInvoke(payload, context);
      if (admitted === undefined) return;
      if ('refusal' in admitted) {
        await sendResult(admitted.refusal);
        return;
      }
      const result = await runAdmitted(admitted, context);
      if (result !== undefined) await sendResult(result);
    },
  };
}

/** A request that passed every check, with its arguments and duplicate-detection fingerprint. */
interface AdmittedInvoke {
  readonly request: NodeInvokeRequest;
  /** The registry command to run: the request's, or for `mcp.tools.call.v1` the published tool's. */
  readonly command: string;
  /** An `mcp.tools.call.v1` call: answered as an MCP result. */
  readonly mcp: boolean;
  readonly args: unknown;
  readonly fingerprint: string;
}

/**
 * Checks a `node.invoke.request`: well-formed, addressed to this node, a declared command (still not
 * localOnly), parseable params of bounded depth. `undefined` drops it silently (another node's);
 * `refusal` is the error result to answer.
 */
async function admitInvoke(payload: unknown, context: InvokeDispatchContext): Promise<AdmittedInvoke | { readonly refusal: NodeInvokeResultParams } | undefined> {
  const { nodeId, log } = context;
  const registry = context.invoker.registry;
  const parsed = nodeInvokeRequestSchema.safeParse(payload);
  if (!parsed.success) {
    const raw = payload as { id?: unknown; nodeId?: unknown } | undefined;
    log('warning', 'dropped a malformed node.invoke.request');
    return typeof raw?.id === 'string' && raw.id ? { refusal: errorResult(raw.id, nodeId, 'INVALID_REQUEST', 'malformed node.invoke.request') } : undefined;
  }
  const request = parsed.data;
  if (request.nodeId !== nodeId) {
    log('warning', `dropped node.invoke.request ${request.id} addressed to node ${request.nodeId}`);
    return undefined;
  }
  // Only an approved node receives invokes.
  context.onInvoke();
  // The name must have been declared, and still resolve to a command that may be declared: a
  // declared command replaced by a localOnly one before the redeclaration stays refused.
  if (!context.declaredNames().has(request.command) || registry.resolve(request.command)?.definition.localOnly === true) {
    log('warning', `refused node.invoke.request ${request.id}: command ${JSON.stringify(request.command.slice(0, 200))} was not declared to the gateway`);
    return { refusal: errorResult(request.id, nodeId, NOT_DECLARED_CODE, notDeclaredMessage(request.command)) };
  }
  const args = invokeArgs(request);
  if (!args.ok) return { refusal: errorResult(request.id, nodeId, 'INVALID_REQUEST', args.message) };
  if (exceedsJsonDepth(args.args, MAX_ARGUMENTS_DEPTH)) {
    return { refusal: errorResult(request.id, nodeId, 'INVALID_ARGUMENTS', `Invalid arguments for ${request.command}: they nest deeper than ${MAX_ARGUMENTS_DEPTH} levels.`) };
  }
  if (request.command === MCP_CALL_COMMAND) return admitMcpCall(request, args.args, context);
  try {
    const name = registry.resolve(request.command)?.name ?? request.command;
    // Fields the gateway injects (system.run's runId) do not count: a retry of the same call replays.
    return { request, command: request.command, mcp: false, args: args.args, fingerprint: `${name.toLowerCase()}\n${await argumentsHash(fingerprintArgs(name, args.args))}` };
  } catch {
    return { refusal: errorResult(request.id, nodeId, 'INVALID_REQUEST', 'params cannot be read as JSON') };
  }
}

/**
 * Checks an `mcp.tools.call.v1` call: well-formed params naming a tool this node publishes now,
 * whose imported command is still registered; anything else is refused before the pipeline.
 */
async function admitMcpCall(request: NodeInvokeRequest, raw: unknown, context: InvokeDispatchContext): Promise<AdmittedInvoke | { readonly refusal: NodeInvokeResultParams }> {
  const { nodeId, log } = context;
  const params = mcpCallParams(raw);
  if (!params) return { refusal: errorResult(request.id, nodeId, 'INVALID_REQUEST', `${MCP_CALL_COMMAND} needs { server: string, tool: string, arguments?: object }`) };
  const published = context.mcpTool?.(params.server, params.tool);
  const command = published ? context.invoker.registry.resolve(published.command) : undefined;
  if (!published || !command) {
    log('warning', `refused ${MCP_CALL_COMMAND} ${request.id}: tool ${JSON.stringify(params.tool.slice(0, 200))} of server ${JSON.stringify(params.server.slice(0, 200))} is not published`);
    return { refusal: errorResult(request.id, nodeId, 'INVALID_REQUEST', `unknown MCP tool: ${JSON.stringify(params.tool.slice(0, 200))} of server ${JSON.stringify(params.server.slice(0, 200))} is not published by this node`) };
  }
  try {
    return { request, command: command.name, mcp: true, args: params.arguments, fingerprint: `${command.name.toLowerCase()}\n${await argumentsHash(params.arguments)}` };
  } catch {
    return { refusal: errorResult(request.id, nodeId, 'INVALID_REQUEST', 'params cannot be read as JSON') };
  }
}

/** Runs an admitted invoke through the ledger and the pipeline; `undefined` when the node closed meanwhile. */
async function runAdmitted(admitted: AdmittedInvoke, context: InvokeDispatchContext): Promise<NodeInvokeResultParams | undefined> {
  const { request, args, command } = admitted;
  const { nodeId, invoker, log } = context;
  const registry = invoker.registry;
  const timeoutMs = typeof request.timeoutMs === 'number' && request.timeoutMs > 0 ? request.timeoutMs : undefined;
  const ticket = context.ledger.submit({
    invokeId: request.id,
    key: request.idempotencyKey ?? `invoke:${request.id}`,
    fingerprint: admitted.fingerprint,
    run: async (signal) => {
      const invoke = (command: string, commandArgs: unknown) =>
        invoker.invoke(
          { command, args: commandArgs, transport: 'gateway', requestId: request.id, caller: `gateway ${context.url}`, ...(timeoutMs !== undefined ? { timeoutMs } : {}) },
          { signal },
        );
      // The gateway's exec approvals route expects the snapshot shape, not capnode's { mode, allowlist }.
      const route = admitted.mcp ? undefined : execApprovalsRouteCommand(registry.resolve(command)?.name);
      const outcome = route ? await serveExecApprovalsRoute(route, args, invoke) : await invoke(command, args);
      return admitted.mcp ? toMcpInvokeResult(request.id, nodeId, outcome) : toInvokeResult(request.id, nodeId, outcome);
    },
  });
  context.emitStatus();
  switch (ticket.admission) {
    case 'busy':
      return errorResult(request.id, nodeId, 'UNAVAILABLE', GATEWAY_NODE_BUSY_MESSAGE);
    case 'conflict':
      return errorResult(request.id, nodeId, 'INVALID_REQUEST', 'idempotencyKey was already used for a different command or arguments');
    default: {
      if (ticket.admission !== 'started') log('info', `invoke ${request.id} repeats idempotency key ${request.idempotencyKey}; ${ticket.admission === 'joined' ? 'joining the running call' : 'replaying its result'}`);
      let result: NodeInvokeResultParams;
      try {
        result = await ticket.result;
      } catch {
        result = errorResult(request.id, nodeId, 'INTERNAL', `${request.command} failed with an internal error`);
      }
      context.emitStatus();
      if (context.closed()) return undefined;
      return { ...result, id: request.id };
    }
  }
}
