import {
  CapabilityError,
  createInvoker,
  createRegistry,
  isCapabilityError,
  underscoreToolName,
  type Capability,
  type CommandContext,
  type CommandDefinition,
  type CommandResult,
  type InvocationHook,
  type InvocationRequest,
  type Invoker,
  type Registry,
} from '@capnode/capabilities';
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import { isPlainObject } from '@capnode/toolkit';
import { McpClientError } from '../errors.js';
import { bindMcpToolsSlot, createMcpToolsSlot, findMcpToolsSlot, MCP_TOOLS_SLOT } from '../mcpToolsSlot.js';
import { createPolicyHook, type Approver, type ToolPolicy } from '../policy.js';
import { capText } from '../redact.js';
import type { CallElicitor, Logger } from '../types.js';
import { callResultSchema, toCommandResult } from './callResult.js';
import type { Catalog } from './catalog.js';
import { forwardProgress, withProgress } from './progress.js';
import { httpStatusOf } from './sdkSeam.js';
import type { ServerPool } from './serverPool.js';
import type { ServerSession } from './serverSession.js';
import { errorText } from './util.js';

/** What the host face is built from. */
export interface CapabilityAdapterOptions {
  readonly pool: ServerPool;
  readonly catalog: Catalog;
  readonly policy: ToolPolicy;
  readonly logger: Logger;
  readonly scrub: (text: string) => string;
  /**
   * The host's pipeline, composed with a {@link McpToolsSlot} (`createMcpToolsSlot`) that the policy
   * binds into; without it a private registry and invoker are made.
   */
  readonly invoker?: Invoker;
  readonly hooks?: readonly InvocationHook[];
  readonly approve?: Approver;
}

/**
 * The host face of the runtime: the imported tools as one `mcp` capability in an invocation
 * pipeline's registry (so built-in capabilities and imported tools share policy, approval and
 * audit), the policy hook, and the `tools/call` each command runs.
 */
export class CapabilityAdapter {
  readonly registry: Registry;
  readonly invoker: Invoker;
  /** True when the registry is a host's: its other commands reserve their names. */
  readonly attached: boolean;
  readonly #options: CapabilityAdapterOptions;
  readonly #unbind: () => void;
  #capability: Capability | undefined;
  #closed = false;
  /**
   * Calls that came in through `runtime.call`, keyed by their request: the caller's own signal and
   * the pipeline's deadline. While the SDK's timeout ends a call before that deadline, the caller's
   * signal cancels it just as the pipeline's would, so no per-call AbortSignal has to be made.
   */
  readonly #directCalls = new WeakMap<InvocationRequest, { readonly signal: AbortSignal | undefined; readonly deadline: number; readonly progress: boolean }>();
  /**
   * The `elicit` of invocations that carry one (a host sets it for clients that can elicit), keyed
   * by request: the pipeline hands it to hooks, not to commands, so a hook picks it up.
   */
  readonly #elicitors = new WeakMap<InvocationRequest, CallElicitor>();

  constructor(options: CapabilityAdapterOptions) {
    this.#options = options;
    this.attached = options.invoker !== undefined;
    this.registry = options.invoker?.registry ?? createRegistry();
    const slot = options.invoker ? findMcpToolsSlot(options.invoker.hooks) : createMcpToolsSlot();
    if (!slot) {
      throw new McpClientError(
        'invalid_config',
        `the invoker given to the MCP runtime has no '${MCP_TOOLS_SLOT}' slot for the imported tools' policy: compose it with createMcpToolsSlot() in createInvoker({ hooks })`,
      );
    }
    const policy = createPolicyHook({
      policy: options.policy,
      lookup: (name) => options.catalog.lookup(name),
      ...(options.approve ? { approve: options.approve } : {}),
    }).beforeInvoke!;
    this.#unbind = bindMcpToolsSlot(slot, (invocation) => {
      // Kept for the call's `tools/call`: the pipeline hands `elicit` to hooks, not to commands.
      const elicit = elicitorOf(invocation);
      if (elicit) this.#elicitors.set(invocation.request, elicit);
      return policy(invocation);
    });
    this.invoker = options.invoker ?? createInvoker({ registry: this.registry, hooks: [slot, ...(options.hooks ?? [])] });
  }

  /** Names of the host's own commands, which imported tools must not take. */
  reservedNames(): string[] {
    if (!this.attached) return [];
    return this.registry
      .commands()
      .filter((command) => !this.#capability?.commands.includes(command.definition))
      // Both spellings: the registry refuses a name that is another command's underscore spelling.
      .flatMap((command) => [command.name, underscoreToolName(command.name)]);
  }

  /**
   * Records the caller's signal and deadline of a `runtime.call` request (see `#directCalls`), and
   * whether it was given `onProgress`.
   */
  noteDirectCall(request: InvocationRequest, signal: AbortSignal | undefined, deadline: number, progress: boolean): void {
    this.#directCalls.set(request, { signal, deadline, progress });
  }

  /** Wraps a built-in command so it fails at once after close and never leaks raw errors. */
  guard(command: CommandDefinition): CommandDefinition {
    return { ...command, execute: (args: unknown, context) => this.#guarded(() => command.execute(args, context)) } satisfies CommandDefinition;
  }

  /** Publishes the current catalog as the `mcp` capability, replacing the previous one. */
  sync(): void {
    if (this.#closed) return;
    const { catalog, logger } = this.#options;
    const commands: CommandDefinition[] = catalog.entries.map((entry) => ({
      name: entry.exposed,
      description: entry.description,
      inputSchema: entry.inputSchema,
      ...(entry.commandAnnotations ? { annotations: entry.commandAnnotations } : {}),
      localOnly: true,
      execute: (args: unknown, context) => this.#callServer(entry.server, entry.name, args, context),
    }));
    const next: Capability = { category: 'mcp', commands: [...commands, ...catalog.builtins] };
    if (this.#capability) this.registry.unregister(this.#capability);
    this.#capability = undefined;
    try {
      this.registry.register(next);
      this.#capability = next;
    } catch (error) {
      logger.error(`mcp: imported tools could not be registered: ${errorText(error)}`);
    }
  }

  /** Removes the capability from the registry and empties the pipeline's slot of this runtime's policy. */
  close(): void {
    this.#closed = true;
    this.#unbind();
    if (this.#capability) this.registry.unregister(this.#capability);
    this.#capability = undefined;
  }

  async #guarded(run: () => unknown): Promise<CommandResult> {
    if (this.#closed) throw this.#options.pool.closedError();
    try {
      return (await run()) as CommandResult;
    } catch (error) {
      if (isCapabilityError(error)) throw error;
      throw new CapabilityError('failed', capText(this.#options.pool.describe(error)));
    }
  }

  /** The signal that cancels one tools/call (the SDK sends notifications/cancelled when it aborts). */
  #callSignal(context: CommandContext, timeoutMs: number): AbortSignal | undefined {
    const direct = this.#directCalls.get(context.request);
    if (direct && direct.deadline - performance.now() >= timeoutMs) return direct.signal;
    return context.signal;
  }

  /**
   * Progress of a tools/call goes to the caller's `context.progress`: always for calls from other
   * transports (the host's clients; a no-op there unless they asked), for `runtime.call` only when it
   * was given `onProgress`, so a harness call without it sends no progress token.
   */
  #progressOf(context: CommandContext): ReturnType<typeof forwardProgress> | undefined {
    const direct = this.#directCalls.get(context.request);
    return direct && !direct.progress ? undefined : forwardProgress(context.progress, this.#options.scrub);
  }

  async #callServer(serverName: string, toolName: string, args: unknown, context: CommandContext): Promise<CommandResult> {
    const { pool } = this.#options;
    if (this.#closed) throw pool.closedError();
    const session = pool.sessions.get(serverName);
    if (!session || session.closed) throw pool.closedError();
    // In flight from here: an idle disconnect never cuts a call, even one waiting for a slot.
    const done = session.beginCall();
    try {
      return await this.#callSession(session, serverName, toolName, args, context);
    } finally {
      done();
    }
  }

  async #callSession(session: ServerSession, serverName: string, toolName: string, args: unknown, context: CommandContext): Promise<CommandResult> {
    const { pool } = this.#options;
    if (session.pausedUntil !== 0 && session.pausedUntil > Date.now()) {
      const until = new Date(session.pausedUntil);
      const seconds = Math.ceil((session.pausedUntil - Date.now()) / 1000);
      throw new CapabilityError('busy', `MCP server '${serverName}' is paused after repeated tool failures; retry after ${until.toISOString()} (in ${seconds} s).`);
    }
    const connection = session.connection && session.state === 'connected' ? session.connection : await session.ensureConnected(context.signal);
    // A call to a known tool never waits for a re-list (a hung tools/list must not stall it); only
    // a tool the last good list no longer has is refused.
    if (session.toolList.listed && !session.toolList.has(toolName)) {
      throw new CapabilityError('unknown_command', `MCP server '${serverName}' no longer offers the tool '${toolName}'.`);
    }
    const timeoutMs = session.server.toolTimeoutMs;
    const signal = this.#callSignal(context, timeoutMs);
    // The cap's queue waits within the pipeline's deadline (context.signal), not the tool timeout.
    const release = session.limiter ? await session.limiter.acquire(serverName, context.signal) : undefined;
    if (session.closed || this.#closed) {
      release?.();
      throw pool.closedError();
    }
    // Only a call holding a slot may be asked the server's questions (a queued one cannot be what asked).
    const endCall = session.calls.begin(this.#elicitors.get(context.request) ?? elicitorOf(context));
    try {
      // Session close rejects the call through `settleOnClose` rather than a combined signal:
      // AbortSignal.any costs tens of microseconds per call on Node 20.
      const result = await session.settleOnClose(
        withProgress(connection.client, this.#progressOf(context), (meta) =>
          connection.client.request(
            { method: 'tools/call', params: { name: toolName, arguments: isPlainObject(args) ? args : {}, ...(meta ? { _meta: meta } : {}) } },
            callResultSchema,
            signal ? { signal, timeout: timeoutMs } : { timeout: timeoutMs },
          ),
        ),
      );
      session.recordSuccess();
      return toCommandResult(result, this.#options.scrub);
    } catch (error) {
      if (session.closed || this.#closed) throw pool.closedError();
      if (signal?.aborted) throw new CapabilityError('cancelled', `${serverName}__${toolName} was cancelled.`);
      const timedOut = error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout;
      const status = httpStatusOf(error);
      if (status === 404 && connection.transport !== 'stdio') session.recycle('the server reported the session as expired (HTTP 404)');
      session.recordFailure(timedOut);
      if (timedOut) throw new CapabilityError('timeout', `MCP server '${serverName}' did not answer '${toolName}' within ${timeoutMs / 1000} s.`);
      const lost = error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed;
      const detail = lost ? (session.lastError ?? 'the connection closed') : pool.describe(error);
      throw new CapabilityError('failed', capText(`MCP server '${serverName}' failed '${toolName}': ${detail}`));
    } finally {
      endCall();
      release?.();
    }
  }
}

/**
 * An `elicit` function on an invocation or command context, when the pipeline provides one. One
 * answered only on a retry of the call (`elicitOnRetry`, MCP 2026-07-28 `input_required`) is not
 * taken: the imported server waits for its answer within this call, which a retry cannot give.
 */
function elicitorOf(carrier: object): CallElicitor | undefined {
  const { elicit, elicitOnRetry } = carrier as { readonly elicit?: unknown; readonly elicitOnRetry?: unknown };
  return typeof elicit === 'function' && elicitOnRetry !== true ? (elicit as CallElicitor) : undefined;
}
