import { CliError } from './errors.js';
import { readText, send, unexpectedStatus, type Endpoint } from './http.js';

/** A JSON-RPC message the host sent that is not the response (progress, log). */
export interface RpcNotification {
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

export interface RpcCallOptions {
  readonly signal?: AbortSignal;
  readonly onNotification?: (notification: RpcNotification) => void;
}

interface RpcResponse {
  readonly id?: unknown;
  readonly result?: unknown;
  readonly error?: { code: number; message: string; data?: unknown };
  readonly method?: string;
  readonly params?: Record<string, unknown>;
}

let nextId = 1;

/** The id the next {@link rpcCall} will use; lets a caller cancel a call it is about to make. */
export function peekNextId(): number {
  return nextId;
}

function parseMessage(text: string): RpcResponse {
  try {
    return JSON.parse(text) as RpcResponse;
  } catch {
    throw new CliError('failure', `the host sent a response that is not JSON: ${text.slice(0, 200)}`);
  }
}

/** The JSON-RPC messages of a `text/event-stream` body, in order. */
export async function* sseMessages(stream: AsyncIterable<Buffer>): AsyncGenerator<RpcResponse> {
  let buffer = '';
  for await (const chunk of stream) {
    buffer += chunk.toString('utf8');
    let end: RegExpExecArray | null;
    while ((end = /\r?\n\r?\n/.exec(buffer))) {
      const event = buffer.slice(0, end.index);
      buffer = buffer.slice(end.index + end[0].length);
      const data = event
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
        .join('\n');
      if (data) yield parseMessage(data);
    }
  }
}

/**
 * Sends one JSON-RPC request to the host's MCP endpoint as a sessionless POST and returns its
 * `result`. Accepts a plain JSON or an SSE answer; notifications in an SSE stream go to
 * `onNotification`. A JSON-RPC error becomes a {@link CliError}.
 */
export async function rpcCall(endpoint: Endpoint, method: string, params: Record<string, unknown>, options: RpcCallOptions = {}): Promise<unknown> {
  const id = nextId++;
  const result = await send(endpoint, endpoint.url, {
    method: 'POST',
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    headers: { accept: 'application/json, text/event-stream' },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (result.status !== 200) throw await unexpectedStatus(endpoint, result);
  const type = String(result.headers['content-type'] ?? '');
  let response: RpcResponse | undefined;
  if (type.startsWith('text/event-stream')) {
    try {
      for await (const message of sseMessages(result.response)) {
        if (message.method !== undefined && message.id === undefined) options.onNotification?.({ method: message.method, ...(message.params ? { params: message.params } : {}) });
        else if (message.id === id) {
          response = message;
          break;
        }
      }
    } catch (error) {
      if (options.signal?.aborted) throw new CliError('interrupted', 'interrupted');
      throw error;
    } finally {
      result.response.destroy();
    }
  } else {
    const body = parseMessage(await readText(result.response));
    response = Array.isArray(body) ? (body as RpcResponse[]).find((message) => message.id === id) : body;
  }
  if (!response) throw new CliError('failure', `the host at ${endpoint.url} closed the stream without answering ${method}`);
  if (response.error) throw new CliError('failure', `the host answered ${method} with error ${response.error.code}: ${response.error.message}`);
  return response.result;
}

/** Sends a JSON-RPC notification (no answer expected); errors are ignored. */
export async function rpcNotify(endpoint: Endpoint, method: string, params: Record<string, unknown>): Promise<void> {
  try {
    const result = await send(endpoint, endpoint.url, {
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', method, params }),
      headers: { accept: 'application/json, text/event-stream' },
    });
    result.response.resume();
  } catch {
    // Best effort: the call it refers to ends anyway.
  }
}
