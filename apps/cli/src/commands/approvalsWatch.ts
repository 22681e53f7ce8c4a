import { createInterface } from 'node:readline';
import type { IncomingMessage } from 'node:http';
import type { PendingApproval } from '@capnode/capabilities';
import { escapeForDisplay } from '@capnode/capabilities/display';
import { readServerSentEvents } from '@capnode/host/setup';
import { delay } from '@capnode/toolkit';
import type { Context } from '../context.js';
import { isCliError } from '../errors.js';
import { send, type Endpoint } from '../http.js';
import { answerApproval, describeDecision, formatApproval, isPendingApproval, unreachable } from './approvals.js';

/** Wait before reconnecting to a host whose event stream ended (host restarted, request deadline). */
const RECONNECT_MS = 1_000;

const KEYS: Readonly<Record<string, 'allow-once' | 'allow-always' | 'deny' | 'skip' | 'quit'>> = {
  a: 'allow-once',
  A: 'allow-always',
  d: 'deny',
  s: 'skip',
  q: 'quit',
};

const PROMPT = '[a] allow once  [A] allow always  [d] deny  [s] skip  [q] quit';

interface Held {
  readonly endpoint: Endpoint;
  readonly approval: PendingApproval;
}

interface StreamEvent {
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/** The host's approval events with their JSON data; a malformed event is skipped (the next snapshot corrects the view). */
async function* streamEvents(response: IncomingMessage, signal: AbortSignal): AsyncGenerator<StreamEvent> {
  for await (const { event, data } of readServerSentEvents(response, { signal })) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      continue;
    }
    if (typeof parsed === 'object' && parsed !== null) yield { event, data: parsed as Record<string, unknown> };
  }
}

/**
 * `capnode approvals watch`: streams the pending approvals of every running host live
 * (`GET /_capnode/approvals/events`, admin token) and answers them from the keyboard: `a` allow once,
 * `A` allow always, `d` deny, `s` skip, `q` quit. On a terminal single keys act; from a pipe each
 * line is one answer (`a`, `A`, `d`, `s`, `q`, or `allow|always|deny <id>`), and the watch ends with
 * its input. The oldest unanswered approval is the one a key answers.
 */
export async function watchApprovals(context: Context, endpoints: readonly Endpoint[]): Promise<number> {
  const controller = new AbortController();
  const held = new Map<string, Held>();
  const skipped = new Set<string>();
  let connected = 0;
  let firstError: unknown;

  const current = (): Held | undefined => [...held.values()].find((entry) => !skipped.has(entry.approval.id));
  const prompt = () => {
    const next = current();
    if (next && !context.json) context.out(`answer ${next.approval.id}? ${PROMPT}`);
  };
  const add = (endpoint: Endpoint, approval: unknown) => {
    if (!isPendingApproval(approval) || held.has(approval.id)) return;
    const first = current() === undefined;
    held.set(approval.id, { endpoint, approval });
    if (context.json) context.out(JSON.stringify({ event: 'requested', approval }));
    else context.out(`\npending approval:\n${formatApproval(approval)}`);
    if (first) prompt();
  };

  const follow = async (endpoint: Endpoint): Promise<void> => {
    while (!controller.signal.aborted) {
      try {
        const result = await send(endpoint, new URL('approvals/events', endpoint.url).href, { method: 'GET', headers: { accept: 'text/event-stream' }, signal: controller.signal });
        if (result.status !== 200) {
          result.response.resume();
          throw new Error(`HTTP ${result.status}`);
        }
        connected += 1;
        for await (const { event, data } of streamEvents(result.response, controller.signal)) {
          if (event === 'snapshot') {
            const listed = (Array.isArray(data.approvals) ? data.approvals : []).filter(isPendingApproval);
            // After a reconnect: what this host answered meanwhile is gone.
            const ids = new Set(listed.map((approval) => approval.id));
            for (const [id, entry] of held) if (entry.endpoint === endpoint && !ids.has(id)) held.delete(id);
            for (const approval of listed) add(endpoint, approval);
          }
          else if (event === 'requested') add(endpoint, data.approval);
          else if (event === 'resolved' && isPendingApproval(data.approval) && held.delete(data.approval.id)) {
            const wasCurrent = !skipped.has(data.approval.id);
            skipped.delete(data.approval.id);
            if (context.json) context.out(JSON.stringify({ event: 'resolved', id: data.approval.id, decision: data.decision, settlement: data.settlement }));
            else context.out(`${data.approval.id}: ${data.settlement === 'answered' ? describeDecision(String(data.decision)) : escapeForDisplay(String(data.settlement))}`);
            if (wasCurrent) prompt();
          }
        }
      } catch (error) {
        if (controller.signal.aborted) return;
        if (connected === 0) {
          firstError ??= error;
          return;
        }
      }
      await delay(RECONNECT_MS);
    }
  };

  const answer = async (choice: string): Promise<void> => {
    const [word, rawId] = choice.trim().split(/\s+/, 2);
    const action = rawId === undefined ? KEYS[word ?? ''] : ({ allow: 'allow-once', always: 'allow-always', deny: 'deny' } as const)[word as 'allow'];
    if (action === undefined) {
      if (word) context.err(`capnode: unknown answer '${escapeForDisplay(choice.trim())}' — ${PROMPT}, or allow|always|deny <id>`);
      return;
    }
    if (action === 'quit') {
      controller.abort();
      return;
    }
    const target = rawId === undefined ? current() : held.get(rawId.toLowerCase());
    if (!target) {
      context.err(rawId === undefined ? 'capnode: no pending approval to answer' : `capnode: no pending approval '${escapeForDisplay(rawId)}'`);
      return;
    }
    if (action === 'skip') {
      skipped.add(target.approval.id);
      prompt();
      return;
    }
    try {
      const result = await answerApproval(target.endpoint, target.approval, action);
      if (result.status !== 200) context.err(`capnode: ${escapeForDisplay(String(result.value.error ?? 'not answered'))}`);
    } catch (error) {
      context.err(`capnode: ${escapeForDisplay((error as Error).message)}`);
    }
  };

  const followers = endpoints.map(follow);
  const input = readInput(answer, controller.signal);
  const allFailed = Promise.all(followers).then(() => connected === 0 && !controller.signal.aborted);
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  try {
    const failed = await Promise.race([allFailed, input.then(() => false)]);
    if (failed) {
      if (isCliError(firstError) && firstError.code !== 'unreachable') throw firstError;
      throw unreachable(endpoints);
    }
  } finally {
    process.off('SIGINT', onSigint);
    controller.abort();
    await Promise.all(followers);
  }
  return 0;
}

/**
 * Feeds answers from stdin until it ends or `signal` aborts: single keys on a terminal, lines from
 * a pipe. Each answer is handled before the next is read, so answers apply in order.
 */
async function readInput(answer: (choice: string) => Promise<void>, signal: AbortSignal): Promise<void> {
  const stdin = process.stdin;
  if (stdin.isTTY) {
    stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    try {
      await new Promise<void>((resolve) => {
        let queue = Promise.resolve();
        const onData = (key: string) => {
          if (key === '\u0003' || key === 'q') return resolve();
          queue = queue.then(() => answer(key));
        };
        stdin.on('data', onData);
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      stdin.setRawMode(false);
      stdin.pause();
    }
    return;
  }
  const lines = createInterface({ input: stdin, crlfDelay: Infinity });
  signal.addEventListener('abort', () => lines.close(), { once: true });
  for await (const line of lines) {
    await answer(line);
    if (signal.aborted) break;
  }
  // Let the answers' own events print before the watch ends.
  await delay(200);
}
