import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { JsonRpcErrorCode, STDIO_RELAY_HEADER } from '@capnode/protocol';
import { waitFor } from '@capnode/toolkit';
import { readBody } from '@capnode/toolkit/http';
import { readServerSentEvents } from './serverSentEvents.js';

/** Largest message relayed, as an SSE event or a JSON answer (a tool result with images fits). */
const MAX_RELAYED_EVENT = 64 * 1024 * 1024;

/** Options of {@link relayStdio}. */
export interface StdioRelayOptions {
  /** The running host's MCP endpoint, e.g. `http://127.0.0.1:8765/`. */
  readonly url: string;
  /** Its MCP bearer token. */
  readonly token: string;
  /** How to find the right token, said when the host refuses it (HTTP 401). */
  readonly tokenHint?: string;
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
  /** Diagnostics for stderr; `prefix` of each line is the caller's (`capnode mcp: `). */
  readonly log?: (line: string) => void;
}

type Message = { readonly jsonrpc?: string; readonly id?: string | number | null; readonly method?: string; readonly result?: unknown; readonly params?: unknown };

interface Reply {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly response: IncomingMessage;
}

/** One request to the host over `node:http` (no 5-minute header timeout: a call may wait long for its approval). */
function send(url: string, token: string, init: { method: 'GET' | 'POST' | 'DELETE'; body?: string; headers: Record<string, string>; signal?: AbortSignal }): Promise<Reply> {
  const headers: Record<string, string> = { ...init.headers, authorization: `Bearer ${token}` };
  if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(init.body));
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method, headers, agent: false, ...(init.signal ? { signal: init.signal } : {}) }, (response) =>
      resolve({ status: response.statusCode ?? 0, headers: response.headers, response }),
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/** A JSON answer of the host, read whole within the relayed-message bound. */
async function readText(response: IncomingMessage): Promise<string> {
  const read = await readBody(response, MAX_RELAYED_EVENT);
  if (read.kind === 'ok') return read.text;
  response.destroy();
  throw new Error(read.kind === 'too-large' ? `an answer from the host exceeded ${MAX_RELAYED_EVENT} bytes` : 'the host closed the answer before its end');
}

/**
 * Relays a stdio MCP client (`capnode mcp`, `capnode-tray mcp`) to the running host's Streamable
 * HTTP endpoint and the host's messages (responses, progress, list_changed, elicitation requests)
 * back, so the call goes through that host's pipeline, approval queue, audit and dashboard. The
 * client's own `initialize` (its name) reaches the host unchanged. Resolves once the client closed
 * `input` (or `signal` aborted) and the requests in flight were answered or `drainMs` passed.
 */
export async function relayStdio(options: StdioRelayOptions): Promise<void> {
  const { url, token, output } = options;
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
  const forward = async (result: Reply, onMessage: (message: Message) => void) => {
    const type = String(result.headers['content-type'] ?? '');
    if (type.startsWith('text/event-stream')) {
      try {
        for await (const event of readServerSentEvents(result.response, { maxEventLength: MAX_RELAYED_EVENT })) if (event.data !== '') onMessage(JSON.parse(event.data) as Message);
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
      const result = await send(url, token, { method: 'GET', headers: headers(), signal: stop.signal });
      if (result.status !== 200) {
        result.response.resume();
        return;
      }
      await forward(result, deliver);
    } catch (error) {
      if (!stop.signal.aborted) log(`the host's notification stream ended: ${(error as Error).message}`);
    }
  };

  const post = async (message: Message) => {
    const isInitialize = message.method === 'initialize';
    const relay = isInitialize && options.adminToken !== undefined ? { [STDIO_RELAY_HEADER]: `Bearer ${options.adminToken}` } : {};
    try {
      const result = await send(url, token, { method: 'POST', body: JSON.stringify(message), headers: { ...headers(), ...relay }, signal: stop.signal });
      if (isInitialize) sessionId = typeof result.headers['mcp-session-id'] === 'string' ? result.headers['mcp-session-id'] : undefined;
      if (result.status === 202 || result.status === 204) {
        result.response.resume();
      } else if (result.status === 401) {
        result.response.resume();
        fail(message, `the host at ${url} refused the token (HTTP 401). ${options.tokenHint ?? ''}`.trim());
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
      const text = `the capnode host could not be reached: ${(error as Error).message}`;
      log(text);
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
    await waitFor(done, { timeoutMs: options.drainMs ?? 10_000 }).catch(() => log(`${inFlight.size} request(s) still running at shutdown were dropped`));
  }
  stop.abort();
  if (sessionId !== undefined) {
    const closing = await send(url, token, { method: 'DELETE', headers: headers() }).catch(() => undefined);
    closing?.response.resume();
  }
}
