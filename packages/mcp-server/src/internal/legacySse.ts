import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  parseJSONRPCMessage,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
  type Transport,
} from '@modelcontextprotocol/server';
import type { AbortHook } from '@capnode/toolkit/http';

const ENCODER = new TextEncoder();

interface PendingCall {
  readonly lifetime: AbortHook;
  readonly done: () => void;
}

/**
 * The server side of the legacy HTTP+SSE transport (protocol 2024-11-05), which the SDK v2 server
 * package no longer ships: one `GET` opens the event stream, whose first event (`endpoint`) names the
 * URL the client POSTs its messages to; every server message travels as a `message` event.
 *
 * A POST carrying a request is held open until its response has been written to the stream, so the
 * HTTP request's concurrency slot and deadline cover the call exactly as on the other HTTP paths
 * (the client then gets `202 Accepted`).
 */
export class LegacySseTransport implements Transport {
  readonly sessionId: string;
  /** The event stream, to be written as the GET's response body. */
  readonly stream: ReadableStream<Uint8Array>;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #keepAlive: ReturnType<typeof setInterval> | undefined;
  #closed = false;
  readonly #pending = new Map<RequestId, PendingCall>();

  constructor(sessionId: string, endpoint: string, keepAliveMs: number) {
    this.sessionId = sessionId;
    this.stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
        controller.enqueue(ENCODER.encode(`event: endpoint\ndata: ${endpoint}\n\n`));
      },
      cancel: () => {
        void this.close();
      },
    });
    if (keepAliveMs > 0) {
      this.#keepAlive = setInterval(() => this.#write(': keep-alive\n\n'), keepAliveMs);
      this.#keepAlive.unref();
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  async start(): Promise<void> {}

  /**
   * Hands one POSTed message to the server. Resolves when a request's response has been sent (or the
   * session ended), at once for notifications and responses. Throws on a malformed message.
   */
  deliver(body: unknown, lifetime: AbortHook): Promise<void> {
    const message = parseJSONRPCMessage(body);
    if (!isJSONRPCRequest(message)) {
      this.onmessage?.(message);
      // The SDK answers a cancelled request with nothing, so its POST is released here.
      if ('method' in message && message.method === 'notifications/cancelled') {
        const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
        if (typeof requestId === 'string' || typeof requestId === 'number') this.#settle(requestId);
      }
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.#pending.get(message.id)?.done();
      this.#pending.set(message.id, { lifetime, done: resolve });
      this.onmessage?.(message);
    });
  }

  /** The lifetime of the HTTP request that carried request `id`, while it is being served. */
  lifetimeOf(id: RequestId): AbortHook | undefined {
    return this.#pending.get(id)?.lifetime;
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return;
    this.#write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const id = (message as { id?: RequestId }).id;
      if (id !== undefined) this.#settle(id);
    }
  }

  #settle(id: RequestId): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    pending.done();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#keepAlive);
    try {
      this.#controller?.close();
    } catch {
      // Already closed or cancelled by the reader.
    }
    for (const pending of this.#pending.values()) pending.done();
    this.#pending.clear();
    this.onclose?.();
  }

  #write(text: string): void {
    if (this.#closed) return;
    try {
      this.#controller?.enqueue(ENCODER.encode(text));
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
