import type { z } from 'zod';
import type { LogLevel } from '@capnode/toolkit';
import type { CommandOutput } from './content.js';

/** Hints for clients and policy; they describe, they do not enforce. */
export interface CommandAnnotations {
  readonly title?: string;
  readonly readOnly?: boolean;
  readonly destructive?: boolean;
  readonly idempotent?: boolean;
  readonly openWorld?: boolean;
}

/** How safe a call is to run again: reads, repeatable writes, everything else (OpenAgent's classes). */
export type CallClassification = 'read_only' | 'idempotent' | 'mutating';

/** A progress report from a running command. */
export interface ProgressUpdate {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/**
 * A question put to the user through the caller's own client (MCP `elicitation/create`, form mode):
 * a message and a flat form schema of primitive fields.
 */
export interface ElicitationRequest {
  /** Names the question (e.g. `approval:<id>`), so an answer given on a retry is matched to it. */
  readonly key?: string;
  readonly message: string;
  readonly requestedSchema: {
    readonly type: 'object';
    readonly properties: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
    readonly required?: readonly string[];
  };
}

/** The user's reply: `accept` with the form's content, `decline`, or `cancel` (dismissed). */
export interface ElicitationResult {
  readonly action: 'accept' | 'decline' | 'cancel';
  readonly content?: Readonly<Record<string, unknown>>;
}

/**
 * Asks the user through the client; present only when the client declared it can (MCP
 * `capabilities.elicitation`). Aborting `signal` withdraws the question.
 */
export type Elicitor = (request: ElicitationRequest, options: { readonly signal: AbortSignal }) => Promise<ElicitationResult>;

export type { LogLevel } from '@capnode/toolkit';

/** Which way a call arrived; recorded in audit and visible to hooks. */
export type Transport = 'mcp-http' | 'mcp-stdio' | 'gateway' | 'openagent' | 'cli' | 'internal';

/** `shell_completed`: a shell session that the connection started has ended. */
export interface ShellCompletedEvent {
  readonly type: 'shell_completed';
  /** The id `shell.start` returned. */
  readonly sessionId: string;
  /** How it ended: `exited` by itself, `killed` through `shell.kill`, `cancelled` by the host closing. */
  readonly status: 'exited' | 'killed' | 'cancelled';
  /** Its exit code; `null` when a signal ended it. */
  readonly exitCode: number | null;
  /** The signal that ended it, else `null`. */
  readonly signal: string | null;
  /** Bytes it wrote to stdout and stderr in all (also those no longer kept). */
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
  /** When it ended, epoch ms. */
  readonly at: number;
}

/** What a command may send, after its call returned, to the client connection the call came from. */
export type ClientEvent = ShellCompletedEvent;

/**
 * The client connection a call arrived on, for transports that keep one: an MCP stdio connection or
 * stateful HTTP session (events become `notifications/capnode/<type>`), an OpenAgent capability
 * channel (`client_tool_event`). Absent for calls without a lasting connection (sessionless and
 * per-request HTTP, the gateway, the CLI).
 */
export interface ClientConnection {
  /** Names the connection, unique within the host for its lifetime. */
  readonly id: string;
  /** Delivers `event` to the client while the connection is open; drops it after. Never throws. */
  notify(event: ClientEvent): void;
}

/** What the caller asked for, independent of transport. */
export interface InvocationRequest {
  /** Command name as the caller spelled it (matched case-insensitively). */
  readonly command: string;
  /** Raw arguments; `undefined` and `null` mean `{}`. */
  readonly args?: unknown;
  readonly transport: Transport;
  /** Transport-level id for logs and audit (JSON-RPC id, gateway invoke id). */
  readonly requestId?: string;
  /** Free-form caller identity for audit (client name, node id); self-reported by MCP clients. */
  readonly caller?: string;
  /**
   * The client as the transport verified it: the name of the MCP token the call authenticated with.
   * Audit, approvals and the approval queue's per-client shares use it over `caller` when present.
   */
  readonly client?: string;
  /** Overall deadline for this call, in ms; the pipeline's default applies when absent. */
  readonly timeoutMs?: number;
  /** The client connection the call came on, when the transport keeps one (see {@link ClientConnection}). */
  readonly connection?: ClientConnection;
}

/** What a command's `execute` receives beside its parsed arguments. */
export interface CommandContext {
  /** Aborted on cancellation, deadline, or host shutdown. Long work must watch it. */
  readonly signal: AbortSignal;
  /** Report progress; a no-op when the caller did not ask for progress. */
  progress(update: ProgressUpdate): void;
  /** Send a log line to the caller (MCP logging) and the host log. */
  log(level: LogLevel, message: string): void;
  /** The request as received, for commands that care about transport or caller. */
  readonly request: InvocationRequest;
}

/**
 * What a command sees or hears of the user, where it locates them, or what of theirs it reads and
 * drives (their files, their desktop's pointer and keyboard, a browser). Each category is off until the
 * user turns it on (`consent` in settings: `off`, `ask` through the approval broker, or `allow`).
 */
export type ConsentCategory = 'screen' | 'camera' | 'microphone' | 'location' | 'files' | 'computer' | 'browser';

/** Whether a command's backend exists on this machine; when not, what to install (e.g. `ffmpeg`). */
export type Availability = { readonly available: true } | { readonly available: false; readonly install: string };

/** Detects a command's backend once at start; cheap (a PATH lookup), never prompts. */
export type AvailabilityProbe = (options: { readonly signal?: AbortSignal }) => Availability | Promise<Availability>;

/** One command of a capability. `I` is the parsed argument type. */
export interface CommandDefinition<I = any> {
  /** Dotted command name, e.g. `system.run`; unique across the registry (case-insensitively). */
  readonly name: string;
  readonly description: string;
  /** zod schema for the arguments; absent means any object is accepted. */
  readonly input?: z.ZodType<I>;
  readonly annotations?: CommandAnnotations;
  /**
   * JSON Schema of the arguments when they are not described in zod, e.g. tools imported from another
   * MCP server. Listed as-is when `input` is absent; the pipeline does not validate against it.
   */
  readonly inputSchema?: import('./registry.js').InputJsonSchema;
  /** Served to local transports (MCP, CLI) only; never declared to a gateway. */
  readonly localOnly?: boolean;
  /**
   * Per-call safety where one string argument decides it, for channels that re-send or refuse to
   * re-run calls by their class (OpenAgent's `classification_by_argument`): `{ method: { GET: 'read_only' } }`.
   * The most restrictive match wins; a call that matches nothing keeps the class its annotations give.
   */
  readonly classificationByArgument?: Readonly<Record<string, Readonly<Record<string, CallClassification>>>>;
  /**
   * Which approval gate the command passes before it runs. `'exec'` marks a command that runs
   * programs on this machine: the exec approval hook applies the exec policy to it. Such a command's
   * arguments must carry `command` (argv array or command-line string) and may carry `cwd` and `shell`.
   */
  readonly approval?: 'exec';
  /** The consent category the command needs before it runs, from any transport. */
  readonly consent?: ConsentCategory;
  /**
   * More categories one call needs, given its parsed arguments (a camera clip with sound also
   * needs `microphone`). Each is checked like `consent`: any `off` refuses, `ask` asks once for all.
   */
  readonly consentFor?: (args: I) => readonly ConsentCategory[];
  /**
   * The diff of the change this call would make to a file, computed from its parsed arguments before
   * it runs, so the approval prompt (consent `ask`) shows it. Called only when the call is put to the
   * user; a {@link CapabilityError} it throws refuses the call before anyone is asked.
   */
  readonly approvalDiff?: (args: I, options: { readonly signal: AbortSignal }) => Promise<string | undefined>;
  /**
   * Probes the backend at start. An unavailable command is not declared to a gateway and fails locally
   * with `unavailable` ("unavailable here: install <what>"). Absent means always available.
   */
  readonly availability?: AvailabilityProbe;
  /** Does the work. Return a result, throw `CapabilityError` for expected failures. */
  execute(args: I, context: CommandContext): CommandOutput | Promise<CommandOutput>;
}

/** A plugin: a category and the commands it provides. */
export interface Capability {
  /** Coarse grouping for gateways and UIs, e.g. `system`, `device`, `screen`. */
  readonly category: string;
  readonly commands: readonly CommandDefinition[];
}

/**
 * Defines one command with its argument type inferred from `input`.
 *
 * @example
 * defineCommand({
 *   name: 'clock.now',
 *   description: 'Current time as ISO 8601.',
 *   annotations: { readOnly: true },
 *   execute: () => new Date().toISOString(),
 * });
 */
export function defineCommand<S extends z.ZodType = z.ZodType<Record<string, unknown>>>(
  definition: Omit<CommandDefinition<z.output<S>>, 'input'> & { readonly input?: S },
): CommandDefinition<z.output<S>> {
  return definition as CommandDefinition<z.output<S>>;
}

/**
 * Defines a capability: a category and its commands. Register the result with a registry.
 *
 * @example
 * const clock = defineCapability({
 *   category: 'clock',
 *   commands: [defineCommand({ name: 'clock.now', description: 'Current time.', execute: () => new Date().toISOString() })],
 * });
 * registry.register(clock);
 */
export function defineCapability(capability: Capability): Capability {
  return capability;
}
