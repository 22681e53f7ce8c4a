import { askApproval, CapabilityError, defineCommand, hashInvocationArgs, json, type CommandContext, type CommandDefinition, type Transport } from '@capnode/capabilities';
import { createSecretScrubber, scrubAndCap } from '@capnode/mcp-client/redact';
import { isPlainObject } from '@capnode/toolkit';
import type { z } from 'zod';
import type { AppPorts } from './appPorts.js';

/** The transports of this machine's own clients: the only ones an `app.*` command answers. */
const LOCAL_TRANSPORTS: ReadonlySet<Transport> = new Set(['mcp-http', 'mcp-stdio', 'cli', 'internal']);

/** `value` with every string scrubbed of the host's secrets and credential shapes, at any depth. */
function scrubDeep(value: unknown, scrub: (text: string) => string): unknown {
  if (typeof value === 'string') return scrubAndCap(value, scrub, Number.MAX_SAFE_INTEGER);
  if (Array.isArray(value)) return value.map((item) => scrubDeep(item, scrub));
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrubDeep(item, scrub)]));
}

/** One `app.*` command: what `defineCommand` takes, with `run` returning the plain result object. */
export interface AppCommandSpec<S extends z.ZodType> extends Omit<CommandDefinition<z.output<S>>, 'execute' | 'input' | 'localOnly'> {
  readonly input?: S;
  run(args: z.output<S>, context: CommandContext): Record<string, unknown> | Promise<Record<string, unknown>>;
}

/**
 * Defines an `app.*` command: `localOnly` (never declared to a gateway or offered to OpenAgent),
 * refused when a call still arrives on another transport, and its result scrubbed of every secret
 * the host knows before it leaves, whatever the command put in it.
 */
export function defineAppCommand<S extends z.ZodType>(ports: AppPorts, spec: AppCommandSpec<S>): CommandDefinition<z.output<S>> {
  const { run, ...definition } = spec;
  return defineCommand({
    ...(definition as Omit<AppCommandSpec<S>, 'run'>),
    localOnly: true,
    async execute(args: z.output<S>, context: CommandContext) {
      if (!LOCAL_TRANSPORTS.has(context.request.transport)) {
        throw new CapabilityError('denied', `${spec.name} is local-only: it serves this machine's own clients, never a gateway or OpenAgent.`);
      }
      const result = await run(args, context);
      const secrets = ports.secrets().filter((secret): secret is string => typeof secret === 'string' && secret.length > 0);
      return json(scrubDeep(result, createSecretScrubber(secrets)) as Record<string, unknown>);
    },
  } as never) as CommandDefinition<z.output<S>>;
}

/** What an `app.*` change puts to the person: the command, one line, an optional diff, and what the answer is bound to. */
export interface AppChange {
  readonly command: string;
  readonly summary: string;
  readonly diff?: string;
  /** The state the summary was computed from: after it changes, a retry is a new request. */
  readonly boundTo: unknown;
}

/**
 * Asks the person before an `app.*` change, through the host's approval queue, naming the caller and
 * its token. Takes the whole call: a caller that shows progress waits; one that does not is held,
 * then answered `approval_pending` and its identical retry runs once allowed.
 */
export async function askAppApproval(ports: AppPorts, context: CommandContext, change: AppChange): Promise<void> {
  const { caller, client, transport } = context.request;
  await askApproval(
    ports.approvals,
    {
      command: change.command,
      commandLine: change.summary,
      summary: change.summary,
      ...(change.diff ? { diff: change.diff } : {}),
      argsHash: await hashInvocationArgs(change.command, change.boundTo),
      ...(caller === undefined ? {} : { caller }),
      ...(client === undefined ? {} : { client }),
      transport,
    },
    change.command,
    context,
  );
}
