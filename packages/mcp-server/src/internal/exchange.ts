import type { ToolNameStyle } from '@capnode/capabilities';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { SHUTTING_DOWN, jsonReply, type Reply } from './jsonRpcReplies.js';

/** A JSON-RPC response as the SDK hands it to a transport. */
type ResponseMessage = { result: unknown } | { error: unknown };

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;

const ENCODER = new TextEncoder();
const ACCEPTED: Reply = { status: 202, body: null };

/** Serializes a JSON-RPC response around the client's id token exactly as it was sent. */
export function serializeResponse(rawId: string, message: ResponseMessage, resultJson?: string): string {
  if ('result' in message) return `{"jsonrpc":"2.0","id":${rawId},"result":${resultJson ?? JSON.stringify(message.result)}}`;
  return `{"jsonrpc":"2.0","id":${rawId},"error":${JSON.stringify(message.error)}}`;
}

interface StreamState {
  readonly controller: ReadableStreamDefaultController<Uint8Array>;
  timer: ReturnType<typeof setInterval> | undefined;
}

export interface ExchangeOptions {
  /** The body was a JSON-RPC batch array: answer with an array. */
  readonly batch: boolean;
  /** The client accepts `text/event-stream`, so mid-call notifications can be delivered. */
  readonly canStream: boolean;
  readonly keepAliveMs: number;
  /** The name style the request selected (`?toolNames=` or its header); the server's default when absent. */
  readonly toolNames?: ToolNameStyle | undefined;
}

/**
 * One HTTP POST on the sessionless path: collects the responses to the requests it carried and
 * answers with a single JSON body, or upgrades to an SSE stream when a notification related to one
 * of its requests (progress, log) arrives before the last result and the client accepts SSE.
 */
export class Exchange {
  readonly response: Promise<Reply>;
  readonly canStream: boolean;
  readonly toolNames: ToolNameStyle | undefined;
  #settle!: (reply: Reply) => void;
  #pending = 0;
  #parts: string[] = [];
  #batch: boolean;
  #keepAliveMs: number;
  #settled = false;
  #stream: StreamState | undefined;
  #closed = false;
  /** Called when the client stops reading an SSE stream. */
  onCancel: (() => void) | undefined;

  constructor(options: ExchangeOptions) {
    this.#batch = options.batch;
    this.canStream = options.canStream;
    this.toolNames = options.toolNames;
    this.#keepAliveMs = options.keepAliveMs;
    this.response = new Promise((resolve) => {
      this.#settle = resolve;
    });
  }

  /** Counts one more request whose response this exchange waits for. */
  expect(): void {
    this.#pending += 1;
  }

  /** Called once every message of the body has been dispatched. */
  dispatched(): void {
    if (this.#pending === 0 && this.#parts.length === 0) this.#answer(ACCEPTED);
    else this.#maybeFinish();
  }

  /** Delivers a response for one of this exchange's requests; the text is already serialized. */
  respond(text: string): void {
    if (this.#closed) return;
    this.#pending -= 1;
    if (this.#stream !== undefined) this.#write(`event: message\ndata: ${text}\n\n`);
    else this.#parts.push(text);
    this.#maybeFinish();
  }

  /** Delivers a notification related to one of this exchange's requests; dropped unless the client streams. */
  notify(message: JSONRPCMessage): void {
    if (this.#closed || !this.canStream || this.#pending === 0) return;
    if (this.#stream === undefined) this.#upgrade();
    this.#write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  /** Ends the exchange without waiting for outstanding responses (server shutdown). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#endStream();
    this.#answer(SHUTTING_DOWN);
  }

  #maybeFinish(): void {
    if (this.#pending > 0) return;
    if (this.#stream !== undefined) {
      this.#closed = true;
      this.#endStream();
      return;
    }
    if (this.#parts.length === 0) return;
    this.#closed = true;
    const body = this.#batch ? `[${this.#parts.join(',')}]` : (this.#parts[0] as string);
    this.#answer(jsonReply(body));
  }

  #answer(reply: Reply): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#settle(reply);
  }

  #upgrade(): void {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
      },
      cancel: () => {
        this.#closed = true;
        this.#endStream();
        this.onCancel?.();
      },
    });
    const stream: StreamState = { controller, timer: undefined };
    this.#stream = stream;
    for (const part of this.#parts) this.#write(`event: message\ndata: ${part}\n\n`);
    this.#parts = [];
    if (this.#keepAliveMs > 0) stream.timer = setInterval(() => this.#write(': keepalive\n\n'), this.#keepAliveMs);
    this.#answer({ status: 200, headers: SSE_HEADERS, body });
  }

  #write(frame: string): void {
    const stream = this.#stream;
    if (stream === undefined) return;
    try {
      stream.controller.enqueue(ENCODER.encode(frame));
    } catch {
      this.#endStream();
    }
  }

  #endStream(): void {
    const stream = this.#stream;
    if (stream === undefined) return;
    if (stream.timer !== undefined) clearInterval(stream.timer);
    stream.timer = undefined;
    try {
      stream.controller.close();
    } catch {
      // Already closed or cancelled by the reader.
    }
  }
}
