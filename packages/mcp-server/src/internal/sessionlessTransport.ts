import {
  findRequestIdToken,
  needsRawNumber,
  requestIdKeyFromMessage,
  type CallRegistration,
  type CancellationTracker,
} from '@capnode/protocol';
import type {
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  MessageExtraInfo,
  RequestId,
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/server';
import type { AbortHook } from './abortLatch.js';
import { serializeResponse, type Exchange } from './exchange.js';

interface ActiveRequest {
  readonly exchange: Exchange;
  /** The client's id token as it goes back on the wire. */
  readonly rawId: string;
  readonly call: ActiveCall | undefined;
}

/** An active `tools/call`; also what the handler reads through {@link SessionlessTransport.call}. */
class ActiveCall implements SessionlessCall {
  readonly registration: CallRegistration;
  readonly requestId: string;
  readonly detach: () => void;
  readonly canStream: boolean;

  constructor(registration: CallRegistration, requestId: string, detach: () => void, canStream: boolean) {
    this.registration = registration;
    this.requestId = requestId;
    this.detach = detach;
    this.canStream = canStream;
  }

  get signal(): AbortSignal {
    return this.registration.signal;
  }
}

/** Per-call facts the `tools/call` handler needs on the sessionless path. */
export interface SessionlessCall {
  readonly signal: AbortSignal;
  readonly canStream: boolean;
  readonly requestId: string;
}

const NOOP = (): void => {};

function idToken(id: RequestId, rawBody: string | undefined): string {
  if (typeof id === 'string') return JSON.stringify(id);
  if (rawBody !== undefined && needsRawNumber(id)) {
    const span = findRequestIdToken(rawBody, 'id');
    if (span !== undefined && span.kind === 'number') {
      const raw = rawBody.slice(span.start, span.end);
      if (Number(raw) === id) return raw;
    }
  }
  return JSON.stringify(id);
}

/**
 * The transport behind sessionless HTTP: one long-lived SDK server instance serves every request.
 *
 * Each inbound request is handed to the server under a fresh internal id, so ids chosen by different
 * clients can never collide inside the SDK; the response is mapped back to its exchange and written
 * around the client's original id token (large numeric ids round-trip exactly). `notifications/cancelled`
 * never reaches the SDK: the cancellation tracker matches it against active `tools/call`s by the
 * client's id (tombstones, duplicate-id protection), because internal ids mean nothing to clients.
 */
export class SessionlessTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  /** Delivers a request straight to the connected server's request handling; `onmessage` when unset. */
  deliverRequest: ((message: JSONRPCRequest) => void) | undefined = undefined;

  readonly #tracker: CancellationTracker;
  readonly #resultJson: (result: unknown) => string | undefined;
  readonly #active = new Map<number, ActiveRequest>();
  #nextId = 0;
  #closed = false;

  constructor(tracker: CancellationTracker, resultJson: (result: unknown) => string | undefined) {
    this.#tracker = tracker;
    this.#resultJson = resultJson;
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ('id' in message && ('result' in message || 'error' in message)) {
      const id = message.id as number;
      const active = this.#active.get(id);
      if (active === undefined) return;
      this.#active.delete(id);
      if (active.call !== undefined) {
        active.call.detach();
        active.call.registration.complete();
      }
      const resultJson = 'result' in message ? this.#resultJson(message.result) : undefined;
      active.exchange.respond(serializeResponse(active.rawId, message, resultJson));
      return;
    }
    // Only notifications tied to one of our requests have a channel; a server→client request cannot
    // be answered without a session, so it is dropped (its sender times out).
    const related = options?.relatedRequestId;
    if (related === undefined || 'id' in message) return;
    this.#active.get(related as number)?.exchange.notify(message);
  }

  /** Dispatches one client request of `exchange`; `lifetime` aborts its capability call (deadline, disconnect). */
  dispatchRequest(exchange: Exchange, message: JSONRPCRequest, rawBody: string | undefined, lifetime: AbortHook | undefined): void {
    if (this.#closed) return;
    const id = ++this.#nextId;
    const rawId = idToken(message.id, rawBody);
    const call = message.method === 'tools/call' ? this.#beginCall(exchange, message, rawBody, rawId, lifetime) : undefined;
    this.#active.set(id, { exchange, rawId, call });
    const internal = { ...message, id };
    if (this.deliverRequest !== undefined) this.deliverRequest(internal);
    else this.onmessage?.(internal);
  }

  /** Dispatches a client notification; `notifications/cancelled` goes to the tracker instead of the SDK. */
  dispatchNotification(message: JSONRPCNotification, rawBody: string | undefined): void {
    if (this.#closed) return;
    if (message.method === 'notifications/cancelled') {
      const params = message.params as { requestId?: unknown; reason?: unknown } | undefined;
      const requestId = params?.requestId;
      if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
      try {
        const key = requestIdKeyFromMessage(requestId, rawBody ?? '', 'params.requestId');
        this.#tracker.cancel(key, typeof params?.reason === 'string' ? params.reason : 'cancelled by the client');
      } catch {
        // An id that cannot be keyed (e.g. NaN-like) matches nothing.
      }
      return;
    }
    this.onmessage?.(message);
  }

  /** The facts of an active `tools/call`, by the internal id the SDK handler sees. */
  call(internalId: RequestId): SessionlessCall | undefined {
    return this.#active.get(internalId as number)?.call;
  }

  /** Number of requests dispatched and not answered yet. */
  get activeCount(): number {
    return this.#active.size;
  }

  /** Aborts the calls of one exchange, e.g. when its client stopped reading the stream. */
  abortExchange(exchange: Exchange, reason: unknown): void {
    for (const active of this.#active.values()) if (active.exchange === exchange) active.call?.registration.abort(reason);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const active of this.#active.values()) {
      if (active.call !== undefined) {
        active.call.detach();
        active.call.registration.abort(new Error('server closed'));
        active.call.registration.complete();
      }
      active.exchange.close();
    }
    this.#active.clear();
    this.onclose?.();
  }

  #beginCall(exchange: Exchange, message: JSONRPCRequest, rawBody: string | undefined, rawId: string, lifetime: AbortHook | undefined): ActiveCall {
    let key;
    try {
      key = requestIdKeyFromMessage(message.id, rawBody ?? '', 'id');
    } catch {
      key = requestIdKeyFromMessage(String(message.id), '', 'id');
    }
    const registration = this.#tracker.register(key);
    const detach = lifetime === undefined ? NOOP : lifetime.subscribe((reason) => registration.abort(reason));
    const requestId = typeof message.id === 'string' ? message.id : rawId;
    return new ActiveCall(registration, requestId, detach, exchange.canStream);
  }
}
