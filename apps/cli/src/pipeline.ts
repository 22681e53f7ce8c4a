import { createInterface } from 'node:readline';
import type { ApprovalBroker, ApprovalDecision, Capability, PendingApproval } from '@capnode/capabilities';
import type { HostPipeline } from '@capnode/host';
import type { Context } from './context.js';
import { hostFailure } from './errors.js';

/** Where a CLI process asks its approvals: a person at the terminal, or nobody (answer: deny, and say so). */
export type CliApprovalMode = 'terminal' | 'refuse';

export interface CliPipelineOptions {
  /** Capabilities to serve (the gateway channel tools); the built-in ones are never added. */
  readonly capabilities?: readonly Capability[];
  /**
   * `terminal`: ask on the terminal when stdin and stderr are both TTYs, else refuse. `refuse`: never
   * ask (`capnode mcp channel`, whose stdin carries MCP). Default `terminal`.
   */
  readonly approvals?: CliApprovalMode;
  /** What runs, for messages: `capnode call`, `capnode mcp channel`. */
  readonly what: string;
}

/** The host's pipeline (exec approvals, audit) built in this process, with its approvals answered by {@link CliApprovalMode}. */
export interface CliPipeline {
  readonly pipeline: HostPipeline;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Streams the terminal approver reads and writes; the process's own by default (tests pass their own). */
export interface TerminalIo {
  readonly input: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  readonly output: NodeJS.WritableStream & { readonly isTTY?: boolean };
}

/**
 * Builds the host's invocation pipeline for a command that runs calls in its own process — the
 * same composition as `capnode serve` (`createHostPipeline`: exec approvals from settings.json, the
 * config directory's `audit.log`), so nothing the CLI runs escapes approval or audit. Approvals are
 * answered at the terminal (`allow once? [y/N]`) when there is one, and refused with a message
 * naming the alternatives when there is none.
 */
export async function openCliPipeline(context: Context, options: CliPipelineOptions): Promise<CliPipeline> {
  const [host, { createSettingsStore }] = await Promise.all([import('@capnode/host'), import('@capnode/host/settings')]);
  let pipeline: HostPipeline;
  try {
    const settings = createSettingsStore(context.paths.settings, { onWarning: (message) => context.err(`capnode warning: ${message}`) });
    pipeline = host.createHostPipeline({
      paths: context.paths,
      settings,
      builtins: false,
      ...(options.capabilities ? { capabilities: options.capabilities } : {}),
      // The host, when one runs, rotates audit.log while running; this short-lived process only appends.
      audit: { rotateWhileRunning: false },
      log: (level, message) => {
        if (level !== 'debug' || context.env.CAPNODE_DEBUG) context.err(`capnode ${level}: ${message}`);
      },
    });
  } catch (error) {
    hostFailure(error, host);
  }
  const { escapeForDisplay } = await import('@capnode/capabilities/display');
  const io: TerminalIo = { input: process.stdin, output: process.stderr };
  const interactive = (options.approvals ?? 'terminal') === 'terminal' && Boolean(io.input.isTTY) && Boolean(io.output.isTTY);
  const stop = interactive ? answerOnTerminal(pipeline.approvals, io, options.what, escapeForDisplay) : refuseApprovals(pipeline.approvals, context, options.what, escapeForDisplay);
  let closing: Promise<void> | undefined;
  const cli: CliPipeline = {
    pipeline,
    close() {
      closing ??= (async () => {
        stop();
        await pipeline.close();
      })();
      return closing;
    },
    [Symbol.asyncDispose]: () => cli.close(),
  };
  return cli;
}

/** What the approval asks, control and invisible characters escaped (a forged line cannot overwrite the prompt). */
function describe(approval: PendingApproval, escape: (text: string) => string): string {
  const text = approval.summary ?? `${approval.command} wants to run \`${approval.commandLine}\``;
  return escape(`${text}${approval.cwd ? ` in ${approval.cwd}` : ''}`);
}

/** Denies every approval at once and says why and what to do instead. */
function refuseApprovals(broker: ApprovalBroker, context: Pick<Context, 'err'>, what: string, escape: (text: string) => string): () => void {
  return broker.subscribe((event) => {
    if (event.type !== 'requested') return;
    broker.resolve(event.approval.id, 'deny');
    context.err(
      `capnode: denied: ${describe(event.approval, escape)} — it needs your approval and ${what} has no terminal to ask on. ` +
        'Run it from a terminal, allow it in settings.json (execApprovals.allowlist, or mcpClient.risk_profiles.<profile>.auto_approve), ' +
        'or call it through the host (capnode serve) and answer with: capnode approvals allow <id>',
    );
  });
}

/**
 * Asks each approval on the terminal, one at a time: `allow once? [y/N]`; anything but `y`/`yes`
 * denies. An approval that expires or is cancelled while asked is dropped from the prompt.
 */
function answerOnTerminal(broker: ApprovalBroker, io: TerminalIo, what: string, escape: (text: string) => string): () => void {
  const queue: PendingApproval[] = [];
  let asking = false;
  let stopped = false;
  const rl = createInterface({ input: io.input, output: io.output, terminal: false });
  const lines: string[] = [];
  let waiter: ((line: string | undefined) => void) | undefined;
  rl.on('line', (line) => {
    if (waiter) {
      const resolve = waiter;
      waiter = undefined;
      resolve(line);
    } else lines.push(line);
  });
  rl.on('close', () => {
    waiter?.(undefined);
    waiter = undefined;
  });
  const nextLine = () => (lines.length > 0 ? Promise.resolve(lines.shift()) : new Promise<string | undefined>((resolve) => (waiter = resolve)));

  async function askNext(): Promise<void> {
    if (asking) return;
    asking = true;
    try {
      for (let approval = queue.shift(); approval && !stopped; approval = queue.shift()) {
        if (!broker.list().some((entry) => entry.id === approval!.id)) continue;
        io.output.write(`capnode: ${what}: approval needed: ${describe(approval, escape)}\n  allow once? [y/N] `);
        const answer = (await nextLine())?.trim().toLowerCase();
        const decision: ApprovalDecision = answer === 'y' || answer === 'yes' ? 'allow-once' : 'deny';
        if (!broker.resolve(approval.id, decision)) io.output.write('capnode: that approval had already ended (expired or cancelled)\n');
        else if (decision === 'deny') io.output.write('capnode: denied\n');
      }
    } finally {
      asking = false;
    }
  }

  const unsubscribe = broker.subscribe((event) => {
    if (event.type !== 'requested') return;
    queue.push(event.approval);
    void askNext();
  });
  return () => {
    stopped = true;
    unsubscribe();
    rl.close();
  };
}
