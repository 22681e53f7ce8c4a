import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { JsonRpcErrorCode } from '@capnode/protocol';
import { waitFor } from '@capnode/toolkit';
import { isCliError } from './errors.js';
import { readText, send, type Endpoint, type HttpResult } from './http.js';
import { sseMessages } from './rpc.js';

/**
 * The `initialize` header that tells the host the session relays a stdio client (its calls are
 * audited as `mcp-stdio`); it carries the admin token, so no plain HTTP client can claim it. The
 * same name as `STDIO_RELAY_HEADER` of `@capnode/mcp-server/node`, spelled here so that `capnode mcp`
 * does not load the server package.
 */
export const RELAY_HEADER = 'x-capnode-stdio-relay';

/** Options of {@link relayStdio}. */
export interface StdioRelayOptions {
  /** The running host's MCP endpoint and token. */
  readonly endpoint: Endpoint;
  /** The host's admin token: sent on `initialize` so the host records the calls as `mcp-stdio`. Without it they show as `mcp-http`. */
  readonly adminToken?: string;
  /** Newline-delimited JSON-RPC from the client (the process's stdin). */
  readonly input: Readable;
  /** Newline-delimited JSON-RPC to the client (the process's stdout): protocol messages only. */
  readonly output: Writable;
  /** Aborting it (SIGINT, SIGTERM) drains like the end of `input`. */
  readonly signal?: AbortSignal;
  /** How long requests still in flight may finish once the client closed its side. Default 10 000 ms. */
  readonly drainMs?: number;
  /** Diagnostics for stderr. */
  readonly log?: (line: string) => void;
}

type Message = { readonly jsonrpc?: string; readonly id?: string | number | null; readonly method?: string; readonly result?: unknown; readonly params?: unknown };

/**
 * `capnode mcp` while a host runs: relays the stdio client's MCP messages to the host's Streamable
 * HTTP endpoint and the host's messages (responses, progress, list_changed, elicitation requests)
 * back, so the call goes through that host's pipeline, approval queue, audit and dashboard. The
 * client's own `initialize` (its name) reaches the host unchanged. Resolves once the client closed
 * `input` (or `signal` aborted) and the requests in flight were answered or `drainMs` passed.
 */
export async function relayStdio(options: StdioRelayOptions): Promise<void> {
  const { endpoint, output } = options;
  const log = options.log ?? (() => {});
  const stop = new AbortController();
  const inFlight = new Set<string | number>();
  let drained: (() => void) | undefined;
  let sessionId: string | undefined;
  let protocolVersion: string | undefined;
  let initializing: Promise<void> = Promise.resolve();
  let listening = false;

  const write = (message: unknown) => {
    if (output.writable) output.write(`${JSON.stringify(message)}\n`);
  };
  const deliver = (message: Message) => {
    if (message.id !== undefined && message.id !== null && message.method === undefined) {
      inFlight.delete(message.id);
      if (inFlight.size === 0) drained?.();
    }
    write(message);
  };
  const fail = (message: Message, text: string) => {
    if (message.method === undefined || message.id === undefined || message.id === null) return;
    deliver({ jsonrpc: '2.0', id: message.id, error: { code: JsonRpcErrorCode.InternalError, message: text } } as Message);
  };
  const headers = (): Record<string, string> => ({
    accept: 'application/json, text/event-stream',
    ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
    ...(protocolVersion === undefined ? {} : { 'mcp-protocol-version': protocolVersion }),
  });

  /** Forwards what a POST or the GET stream answered: JSON (one message or a batch) or SSE. */
  const forward = async (result: HttpResult, onMessage: (message: Message) => void) => {
    const type = String(result.headers['content-type'] ?? '');
    if (type.startsWith('text/event-stream')) {
      try {
        for await (const message of sseMessages(result.response)) onMessage(message as Message);
      } finally {
        result.response.destroy();
      }
      return;
    }
    const text = await readText(result.response);
    if (text.trim() === '') return;
    const body = JSON.parse(text) as Message | Message[];
    for (const message of Array.isArray(body) ? body : [body]) onMessage(message);
  };

  /** The host's own stream (list_changed, shell completions, requests outside a call). */
  const listen = async () => {
    if (listening || sessionId === undefined) return;
    listening = true;
    try {
      const result = await send(endpoint, endpoint.url, { method: 'GET', headers: headers(), signal: stop.signal });
      if (result.status !== 200) {
        result.response.resume();
        return;
      }
      await forward(result, deliver);
    } catch (error) {
      if (!stop.signal.aborted) log(`capnode mcp: the host's notification stream ended: ${(error as Error).message}`);
    }
  };

  const post = async (message: Message) => {
    const isInitialize = message.method === 'initialize';
    const relay = isInitialize && options.adminToken !== undefined ? { [RELAY_HEADER]: `Bearer ${options.adminToken}` } : {};
    try {
      const result = await send(endpoint, endpoint.url, { method: 'POST', body: JSON.stringify(message), headers: { ...headers(), ...relay }, signal: stop.signal });
      if (isInitialize) sessionId = typeof result.headers['mcp-session-id'] === 'string' ? result.headers['mcp-session-id'] : undefined;
      if (result.status === 202 || result.status === 204) {
        result.response.resume();
      } else if (result.status !== 200) {
        const body = (await readText(result.response).catch(() => '')).trim().slice(0, 300);
        fail(message, `the capnode host answered HTTP ${result.status}${body ? `: ${body}` : ''}`);
      } else {
        await forward(result, (answer) => {
          if (isInitialize && answer.id === message.id) {
            const version = (answer.result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
            if (typeof version === 'string') protocolVersion = version;
          }
          deliver(answer);
        });
      }
      if (message.method === 'notifications/initialized') void listen();
    } catch (error) {
      if (stop.signal.aborted) return;
      const text = isCliError(error) ? error.message : `the capnode host could not be reached: ${(error as Error).message}`;
      log(`capnode mcp: ${text}`);
      fail(message, text);
    } finally {
      // A request the host closed without answering must not hold the drain.
      if (message.method !== undefined && message.id !== undefined && message.id !== null && inFlight.delete(message.id) && inFlight.size === 0) drained?.();
    }
  };

  const onLine = (line: string) => {
    if (line.trim() === '') return;
    let message: Message;
    try {
      message = JSON.parse(line) as Message;
    } catch {
      write({ jsonrpc: '2.0', id: null, error: { code: JsonRpcErrorCode.ParseError, message: 'Parse error: a line on stdin is not JSON' } });
      return;
    }
    if (message.method !== undefined && message.id !== undefined && message.id !== null) inFlight.add(message.id);
    if (message.method === 'initialize') {
      initializing = post(message);
      return;
    }
    // Nothing goes out before the session the initialize opens.
    void initializing.then(() => post(message));
  };

  const lines = createInterface({ input: options.input, crlfDelay: Infinity });
  lines.on('line', onLine);
  const ended = new Promise<void>((resolve) => {
    lines.once('close', resolve);
    options.signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  await ended;
  lines.close();
  if (inFlight.size > 0) {
    const done = new Promise<void>((resolve) => (drained = resolve));
    await waitFor(done, { timeoutMs: options.drainMs ?? 10_000 }).catch(() => log(`capnode mcp: ${inFlight.size} request(s) still running at shutdown were dropped`));
  }
  stop.abort();
  if (sessionId !== undefined) {
    const closing = await send(endpoint, endpoint.url, { method: 'DELETE', headers: headers() }).catch(() => undefined);
    closing?.response.resume();
  }
}
