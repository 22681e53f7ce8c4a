import { armDeadline, isPlainObject, type AbortSignalLike } from '@capnode/toolkit';
import { z } from 'zod';
import type { CommandContext, Elicitor, InvocationRequest, LogLevel, ProgressUpdate } from './contract.js';
import { fail, toCommandResult, type CommandOutput, type CommandResult } from './content.js';
import { CapabilityError, isCapabilityError } from './errors.js';
import type { RegisteredCommand, Registry } from './registry.js';
import { NO_PROGRESS } from './internal/noProgress.js';

/** A call that passed argument validation and is about to run; what hooks see. */
export interface Invocation {
  readonly request: InvocationRequest;
  readonly command: RegisteredCommand;
  /** Parsed (validated) arguments. */
  readonly args: unknown;
  /** Aborted on cancellation or deadline; approval waits must watch it. */
  readonly signal: AbortSignal;
  /**
   * Reports progress to the caller while a hook waits (an approval, typically); absent when the
   * caller did not ask for progress. Dropped once the call is over.
   */
  readonly progress?: ((update: ProgressUpdate) => void) | undefined;
  /** Asks the user through the caller's client; absent when the client cannot (see {@link InvokeOptions.elicit}). */
  readonly elicit?: Elicitor | undefined;
  /** See {@link InvokeOptions.elicitOnRetry}. */
  readonly elicitOnRetry?: boolean | undefined;
}

/** The outcome of one invocation; never a thrown error. */
export interface InvocationOutcome {
  readonly result: CommandResult;
  /** Canonical command name, when the command was found. */
  readonly command?: string;
  readonly durationMs: number;
}

/**
 * Policy, approval and audit seam: one slot in the pipeline's hook order, which is fixed when the
 * invoker is created ({@link InvokerOptions.hooks}). `beforeInvoke` hooks run in that order after
 * validation and before execution; throwing (a {@link CapabilityError} with code `denied`, typically)
 * refuses the call, and later hooks do not run. `afterInvoke` hooks run in the same order once the
 * outcome is known, whatever it is. A part made after the pipeline (an MCP client runtime) fills a
 * slot declared for it at composition rather than adding one.
 */
export interface InvocationHook {
  /** Names the slot (`availability`, `audit`, …) in {@link Invoker.hooks}, for status, docs and tests. */
  readonly name?: string;
  /** Returns nothing when it decides at once: the pipeline then goes on without waiting a turn. */
  beforeInvoke?(invocation: Invocation): void | Promise<void>;
  afterInvoke?(invocation: Invocation | undefined, request: InvocationRequest, outcome: InvocationOutcome): void;
}

/**
 * The part of an AbortSignal the pipeline reads (the toolkit's). Any AbortSignal fits; a transport
 * that tracks cancellation itself can pass its own object instead of creating a signal per call
 * (creating one costs microseconds in Node 20, and its garbage outlives young-generation collections).
 */
export type { AbortSignalLike } from '@capnode/toolkit';

export interface InvokeOptions {
  /** Aborts the call: the command's own signal aborts and the outcome is `cancelled`. */
  readonly signal?: AbortSignalLike;
  /** Receives progress; omit when the caller did not ask for progress. */
  readonly onProgress?: (update: ProgressUpdate) => void;
  readonly onLog?: (level: LogLevel, message: string) => void;
  /**
   * Asks the user through the caller's own client (MCP elicitation); omit when the client did not
   * declare it can. Approval hooks put their question there as well as to the host.
   */
  readonly elicit?: Elicitor;
  /**
   * `elicit` is answered on a retry of the call (MCP 2026-07-28 `input_required`): it resolves when
   * the retry carries the answer to that question, and rejects after recording the question for the
   * call's return otherwise. Approval hooks then return `approval_pending` at once instead of waiting.
   */
  readonly elicitOnRetry?: boolean;
}

export interface InvokerOptions {
  readonly registry: Registry;
  /** The hook slots in the order they run; fixed for the invoker's life. */
  readonly hooks?: readonly InvocationHook[];
  /** Deadline for calls whose request sets none. Default 10 minutes. */
  readonly defaultTimeoutMs?: number;
  /** Receives unexpected exceptions (the caller only sees a generic internal error). */
  readonly onInternalError?: (error: unknown, request: InvocationRequest) => void;
}

/** The single entry to command execution; every transport calls `invoke`. */
export interface Invoker {
  invoke(request: InvocationRequest, options?: InvokeOptions): Promise<InvocationOutcome>;
  readonly registry: Registry;
  /** The hook slots in the order they run, as composed at creation (frozen). */
  readonly hooks: readonly InvocationHook[];
}

const DEFAULT_TIMEOUT_MS = 10 * 60_000;
/** Largest delay timers accept; longer ones would fire at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;
const NOOP = () => {};

function clampTimeout(value: number): number {
  if (Number.isNaN(value)) return DEFAULT_TIMEOUT_MS;
  return Math.min(Math.max(Math.floor(value), 1), MAX_TIMEOUT_MS);
}

function summarizeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}


/**
 * One call's abort state. AbortSignals are costly to create in Node and most commands never look at
 * theirs, so the signal is made on first access (already aborted if need be).
 */
class CallAbortState {
  aborted = false;
  reason: unknown = undefined;
  /** Rejects the call's race against the command once it is aborted. */
  onAbort: ((error: CapabilityError) => void) | undefined = undefined;
  #controller: AbortController | undefined = undefined;
  readonly #name: string;
  readonly #timeoutMs: number;
  /** The deadline's end: the caller's signal (its reason) or the timer (a `TimeoutError` naming the command). */
  readonly onDeadline = (reason: unknown, timedOut: boolean): void => {
    this.abort(timedOut ? new DOMException(`${this.#name} timed out after ${this.#timeoutMs} ms.`, 'TimeoutError') : reason);
  };

  constructor(name: string, timeoutMs: number) {
    this.#name = name;
    this.#timeoutMs = timeoutMs;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.#controller?.abort(reason);
    this.onAbort?.(new CapabilityError('cancelled', 'aborted'));
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.aborted) this.#controller.abort(this.reason);
    }
    return this.#controller.signal;
  }
}

/**
 * `work`'s outcome, or a `cancelled` rejection as soon as the call is aborted (the work is left to
 * finish on its own). One promise per wait, instead of a race against a per-call abort promise.
 */
function untilAborted<T>(state: CallAbortState, work: PromiseLike<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (state.aborted) reject(new CapabilityError('cancelled', 'aborted'));
    else state.onAbort = reject;
    work.then(resolve, reject);
  });
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

// The lazy `signal` getters live on these classes' prototypes: an object literal with a getter gets a
// hidden class of its own per evaluation, which keeps the call's whole closure alive until the next
// full GC (every call's garbage was promoted out of the young generation).

class LiveInvocation implements Invocation {
  readonly request: InvocationRequest;
  readonly command: RegisteredCommand;
  readonly args: unknown;
  readonly progress: ((update: ProgressUpdate) => void) | undefined;
  readonly elicit: Elicitor | undefined;
  readonly elicitOnRetry: boolean | undefined;
  readonly #state: CallAbortState;

  constructor(
    request: InvocationRequest,
    command: RegisteredCommand,
    args: unknown,
    state: CallAbortState,
    progress: ((update: ProgressUpdate) => void) | undefined,
    elicit: Elicitor | undefined,
    elicitOnRetry: boolean | undefined,
  ) {
    this.request = request;
    this.command = command;
    this.args = args;
    this.progress = progress;
    this.elicit = elicit;
    this.elicitOnRetry = elicitOnRetry;
    this.#state = state;
  }

  get signal(): AbortSignal {
    return this.#state.signal;
  }
}

class LiveContext implements CommandContext {
  readonly request: InvocationRequest;
  readonly progress: (update: ProgressUpdate) => void;
  readonly log: (level: LogLevel, message: string) => void;
  readonly #state: CallAbortState;

  constructor(request: InvocationRequest, state: CallAbortState, progress: (update: ProgressUpdate) => void, log: (level: LogLevel, message: string) => void) {
    this.request = request;
    this.progress = progress;
    this.log = log;
    this.#state = state;
  }

  get signal(): AbortSignal {
    return this.#state.signal;
  }
}

/** What every call of one invoker shares. */
interface PipelineShared {
  readonly hooks: readonly InvocationHook[];
  readonly onInternalError: InvokerOptions['onInternalError'];
}

function outcomeOf(result: CommandResult, started: number, command?: string): InvocationOutcome {
  const durationMs = performance.now() - started;
  return command === undefined ? { result, durationMs } : { result, durationMs, command };
}

/**
 * One validated call from its `beforeInvoke` hooks to its outcome. The work stays synchronous while
 * every hook decides at once and the command returns a value (no promise and no turn of the event
 * loop until then); it goes on asynchronously from the first hook or command that returns a promise.
 */
class PipelineCall {
  readonly invocation: LiveInvocation;
  readonly #shared: PipelineShared;
  readonly #state: CallAbortState;
  readonly #deadline: { clear(): void };
  readonly #started: number;
  readonly #timeoutMs: number;
  readonly #onLog: InvokeOptions['onLog'];
  readonly #callerSignal: AbortSignalLike | undefined;
  /** Progress and log lines after the outcome would reach the caller after its response; they are dropped. */
  settled = false;

  constructor(shared: PipelineShared, request: InvocationRequest, command: RegisteredCommand, args: unknown, invokeOptions: InvokeOptions, started: number, timeoutMs: number) {
    this.#shared = shared;
    this.#started = started;
    this.#timeoutMs = timeoutMs;
    this.#onLog = invokeOptions.onLog;
    const signal = invokeOptions.signal;
    this.#callerSignal = signal;
    const state = new CallAbortState(command.name, timeoutMs);
    this.#state = state;
    this.#deadline = armDeadline(signal === undefined ? { timeoutMs, unref: true, sharedTimer: true } : { timeoutMs, unref: true, sharedTimer: true, signal }, state.onDeadline);
    const { onProgress } = invokeOptions;
    const progress = onProgress ? (update: ProgressUpdate) => void (this.settled || onProgress(update)) : undefined;
    this.invocation = new LiveInvocation(request, command, args, state, progress, invokeOptions.elicit, invokeOptions.elicitOnRetry);
  }

  /** Runs the hooks from `index` on, then the command. */
  run(index = 0): InvocationOutcome | Promise<InvocationOutcome> {
    const hooks = this.#shared.hooks;
    try {
      for (let at = index; at < hooks.length; at += 1) {
        if (this.#state.aborted) break;
        // A hook that decided at once returns nothing: no promise, no turn of the event loop.
        const pending = hooks[at]!.beforeInvoke?.(this.invocation);
        if (pending !== undefined) return this.#afterHook(pending, at + 1);
      }
      return this.#execute();
    } catch (error) {
      return this.#failed(error);
    }
  }

  async #afterHook(pending: PromiseLike<void>, next: number): Promise<InvocationOutcome> {
    try {
      await untilAborted(this.#state, pending);
    } catch (error) {
      return this.#failed(error);
    }
    return await this.run(next);
  }

  #execute(): InvocationOutcome | Promise<InvocationOutcome> {
    // Never start the command once the call is over, whichever way it ended.
    if (this.#state.aborted) return this.#finish(this.#abortedResult());
    const { request, command, args } = this.invocation;
    const onLog = this.#onLog;
    const context = new LiveContext(request, this.#state, this.invocation.progress ?? NO_PROGRESS, onLog ? (level, message) => void (this.settled || onLog(level, message)) : NOOP);
    try {
      const output = command.definition.execute(args, context);
      if (isPromiseLike(output)) return this.#awaitOutput(output);
      return this.#finish(this.#state.aborted ? this.#abortedResult() : toCommandResult(output));
    } catch (error) {
      return this.#failed(error);
    }
  }

  async #awaitOutput(output: PromiseLike<CommandOutput>): Promise<InvocationOutcome> {
    try {
      const value = await untilAborted(this.#state, output);
      return this.#finish(this.#state.aborted ? this.#abortedResult() : toCommandResult(value));
    } catch (error) {
      return this.#failed(error);
    }
  }

  #failed(error: unknown): InvocationOutcome {
    const name = this.invocation.command.name;
    if (this.#state.aborted) return this.#finish(this.#abortedResult());
    if (isCapabilityError(error)) return this.#finish(fail(error.code, error.message, error.data));
    const outcome = this.#finish(fail('internal', `${name} failed with an internal error.`));
    try {
      this.#shared.onInternalError?.(error, this.invocation.request);
    } catch {
      // A failing reporter must not leave the call unfinished.
    }
    return outcome;
  }

  #abortedResult(): CommandResult {
    const name = this.invocation.command.name;
    return this.#callerSignal?.aborted ? fail('cancelled', `${name} was cancelled.`) : fail('timeout', `${name} timed out after ${this.#timeoutMs} ms.`);
  }

  #finish(result: CommandResult): InvocationOutcome {
    this.settled = true;
    this.#state.onAbort = undefined;
    this.#deadline.clear();
    return outcomeOf(result, this.#started, this.invocation.command.name);
  }
}

/**
 * Creates the invocation pipeline: resolve → validate → `beforeInvoke` hooks → execute under a
 * deadline and signal → `afterInvoke` hooks. Failures come back as typed results.
 */
export function createInvoker(options: InvokerOptions): Invoker {
  const { registry } = options;
  const hooks: readonly InvocationHook[] = Object.freeze([...(options.hooks ?? [])]);
  const defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const shared: PipelineShared = { hooks, onInternalError: options.onInternalError };

  /** The call ready to run, or the outcome of a request that never reaches the hooks. */
  function prepare(request: InvocationRequest, invokeOptions: InvokeOptions, started: number): PipelineCall | InvocationOutcome {
    const command = registry.resolve(request.command);
    if (!command) return outcomeOf(fail('unknown_command', `Unknown tool: ${request.command}`), started);
    const raw = request.args ?? {};
    if (!isPlainObject(raw)) return outcomeOf(fail('invalid_arguments', 'Arguments must be a JSON object.'), started, command.name);
    let args: unknown = raw;
    const schema = command.definition.input;
    if (schema) {
      const parsed = schema.safeParse(raw);
      if (!parsed.success) return outcomeOf(fail('invalid_arguments', `Invalid arguments for ${command.name}: ${summarizeIssues(parsed.error)}`), started, command.name);
      args = parsed.data;
    }
    return new PipelineCall(shared, request, command, args, invokeOptions, started, clampTimeout(request.timeoutMs ?? defaultTimeoutMs));
  }

  return {
    registry,
    async invoke(request, invokeOptions = {}) {
      const started = performance.now();
      const call = prepare(request, invokeOptions, started);
      let invocation: Invocation | undefined;
      let outcome: InvocationOutcome;
      if (call instanceof PipelineCall) {
        invocation = call.invocation;
        const ran = call.run();
        outcome = ran instanceof Promise ? await ran : ran;
      } else {
        outcome = call;
      }
      for (const hook of hooks) {
        try {
          hook.afterInvoke?.(invocation, request, outcome);
        } catch (error) {
          options.onInternalError?.(error, request);
        }
      }
      return outcome;
    },
    hooks,
  };
}
