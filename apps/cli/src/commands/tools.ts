import { escapeForDisplay } from '@capnode/capabilities/display';
import { flag } from '../args.js';
import { mcpEndpoint, type Context } from '../context.js';
import { CliError, isCliError } from '../errors.js';
import type { Endpoint } from '../http.js';
import { failureCode, formatContent, formatToolTable, type CallResult, type ToolInfo } from '../output.js';
import { peekNextId, rpcCall, rpcNotify, type RpcNotification } from '../rpc.js';
import { closeNames } from '../suggest.js';

/** Every tool the host at `endpoint` lists (all pages). */
export async function fetchTools(endpoint: Endpoint): Promise<ToolInfo[]> {
  const tools: ToolInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = (await rpcCall(endpoint, 'tools/list', cursor === undefined ? {} : { cursor })) as { tools?: ToolInfo[]; nextCursor?: string };
    tools.push(...(page.tools ?? []));
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** `capnode --list-tools`: the host's tools as a table, or the raw `tools/list` result with `--json`. */
export async function listTools(context: Context): Promise<number> {
  const endpoint = mcpEndpoint(context);
  const tools = await fetchTools(endpoint);
  context.out(context.json ? JSON.stringify({ tools }, null, 2) : formatToolTable(tools));
  return 0;
}

/** Parses `--params`, pointing at the position of a JSON syntax error. */
export function parseParams(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined || raw.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    const message = (error as Error).message;
    const position = /position (\d+)/.exec(message)?.[1];
    let pointer = '';
    if (position !== undefined) {
      const at = Number(position);
      const start = Math.max(0, at - 30);
      pointer = `\n  ${raw.slice(start, at + 30).replace(/\s/g, ' ')}\n  ${' '.repeat(at - start)}^`;
    }
    throw new CliError('usage', `--params is not valid JSON: ${message}${pointer}\nExample: --params '{"command":["echo","hi"]}'`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError('usage', `--params must be a JSON object, e.g. '{"command":["echo","hi"]}'; got ${Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'null' : `a ${typeof value}`}`);
  }
  return value as Record<string, unknown>;
}

/** Shows progress on one rewritten stderr line when stderr is a terminal; prints log messages. */
function createReporter(context: Context) {
  const tty = process.stderr.isTTY === true;
  let progressShown = false;
  const clear = () => {
    if (progressShown) process.stderr.write('\r\x1b[K');
    progressShown = false;
  };
  // A call waiting for an approval says so once per approval, on a terminal or not: what it waits
  // for and how to answer it (the host's progress message carries both).
  const announced = new Set<string>();
  const announceApprovalWait = (message: string) => {
    const waiting = /^waiting for approval ([a-z2-7]{10}) of (.*): answer with/.exec(message);
    if (!waiting || announced.has(waiting[1]!)) return;
    announced.add(waiting[1]!);
    clear();
    const id = waiting[1]!;
    context.err(`capnode: waiting for approval ${id} of ${waiting[2]} — answer with: capnode approvals allow ${id} | capnode approvals deny ${id} (or capnode approvals watch)`);
  };
  return {
    clear,
    report(notification: RpcNotification) {
      const params = notification.params ?? {};
      if (notification.method === 'notifications/progress') {
        const total = typeof params.total === 'number' ? `/${params.total}` : '';
        const message = escapeForDisplay(typeof params.message === 'string' ? params.message : `${String(params.progress)}${total}`);
        announceApprovalWait(message);
        if (!tty) return;
        process.stderr.write(`\r\x1b[K… ${message.slice(0, Math.max(20, (process.stderr.columns ?? 80) - 3))}`);
        progressShown = true;
      } else if (notification.method === 'notifications/message') {
        clear();
        const data = typeof params.data === 'string' ? params.data : JSON.stringify(params.data);
        context.err(`[${String(params.level ?? 'info')}] ${data}`);
      }
    },
  };
}

function errorText(result: CallResult): string {
  return formatContent(result.content ?? []).trim() || 'the tool reported an error without a message';
}

/** What {@link callCommand} does when the host does not offer the tool (or no host answers). */
export interface CallFallback {
  /** Runs instead of failing; `reason` says why the host could not take the call. */
  (reason: 'unknown' | 'unreachable', args: Record<string, unknown>): Promise<number>;
}

/**
 * `capnode --command <name> --params '<json>'` (and `capnode call`): calls one tool on the host and
 * prints its content (or the raw result with `--json`). Ctrl-C sends `notifications/cancelled` so
 * the host stops the work. With `fallback`, an unknown tool or an unreachable host hands over to it.
 */
export async function callCommand(context: Context, toolName?: string, fallback?: CallFallback): Promise<number> {
  const name = toolName ?? flag(context.args, 'command');
  if (!name) throw new CliError('usage', '--command needs a tool name, e.g. capnode --command device.info');
  const args = parseParams(flag(context.args, 'params'));
  const endpoint = mcpEndpoint(context);

  const controller = new AbortController();
  const requestId = peekNextId();
  const reporter = createReporter(context);
  let interrupted = false;
  const onSigint = () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    reporter.clear();
    context.err(`capnode: cancelling ${name}… (Ctrl-C again to quit at once)`);
    void rpcNotify(endpoint, 'notifications/cancelled', { requestId, reason: 'interrupted by the user (Ctrl-C)' }).finally(() => controller.abort());
  };
  process.once('SIGINT', onSigint);
  let result: CallResult | undefined;
  try {
    result = (await rpcCall(
      endpoint,
      'tools/call',
      { name, arguments: args, _meta: { progressToken: `capnode-${process.pid}` } },
      { signal: controller.signal, onNotification: reporter.report },
    )) as CallResult;
  } catch (error) {
    if (fallback && !interrupted && isCliError(error) && error.code === 'unreachable') {
      process.off('SIGINT', onSigint);
      return fallback('unreachable', args);
    }
    if (!interrupted) throw error;
  } finally {
    reporter.clear();
    process.off('SIGINT', onSigint);
  }
  if (interrupted || result === undefined) {
    context.err(`capnode: ${name} cancelled`);
    return 130;
  }

  if (failureCode(result) === 'unknown_command') {
    if (fallback) return fallback('unknown', args);
    const tools = await fetchTools(endpoint).catch(() => [] as ToolInfo[]);
    const close = closeNames(name, tools.map((tool) => tool.name));
    const hint = close.length ? `did you mean: ${close.join(', ')}? ` : '';
    throw new CliError('failure', `unknown tool '${name}' — ${hint}list all with: capnode --list-tools`);
  }
  if (context.json) {
    context.out(JSON.stringify(result, null, 2));
    return result.isError ? 1 : 0;
  }
  if (result.isError) {
    context.err(`capnode: ${name} failed: ${errorText(result)}`);
    return 1;
  }
  const text = formatContent(result.content ?? []);
  if (text) context.out(text);
  return 0;
}
