import { JsonRpcErrorCode, findRequestIdToken, needsRawNumber, requestIdKeyFromMessage, type CancellationTracker } from '@capnode/protocol';
import { SlotMap } from '@capnode/toolkit';
import type { AbortSignalLike, ToolNameStyle } from '@capnode/capabilities';
import type {
  JSONRPCMessage,
  JSONRPCNotification,
  JSONRPCRequest,
  MessageClassification,
  MessageExtraInfo,
  RequestId,
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/server';
import { AbortLatch, type AbortHook } from '@capnode/toolkit/http';
import { serializeResponse, type Exchange } from './exchange.js';
import type { DirectToolCall } from './buildServer.js';
import { requestClientOf } from './requestClient.js';

interface ActiveRequest {
  readonly exchange: Exchange;
  /** The client's id token as it goes back on the wire. */
  readonly rawId: string;
  readonly call: ActiveCall | undefined;
}

/** How an active call is aborted and retired: a tracker registration, or a plain latch. */
type CallAbort = AbortSignalLike & { abort(reason?: unknown): void; complete(): void };

/** The abort source of a call whose cancellation nobody tracks by id (it ends with its request). */
class CallLatch extends AbortLatch {
  complete(): void {}
}

/** An active `tools/call`; also what the handler reads through {@link SessionlessTransport.call}. */
class ActiveCall implements SessionlessCall {
  readonly abortSource: CallAbort;
  readonly requestId: string;
  readonly detach: () => void;
  readonly canStream: boolean;
  readonly client: string | undefined;

  constructor(abortSource: CallAbort, requestId: string, detach: () => void, canStream: boolean, client: string | undefined) {
    this.abortSource = abortSource;
    this.requestId = requestId;
    this.detach = detach;
    this.canStream = canStream;
    this.client = client;
  }

  /** The abort source itself: it aborts like a signal without creating one per call. */
  get signal(): AbortSignalLike {
    return this.abortSource;
  }
}

/** Per-call facts the `tools/call` handler needs on the sessionless path. */
export interface SessionlessCall {
  readonly signal: AbortSignalLike;
  readonly canStream: boolean;
  readonly requestId: string;
  /** The name of the token its HTTP request authenticated with. */
  readonly client: string | undefined;
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
 * around the client's original id token (large numeric ids round-trip exactly). With a cancellation
 * tracker (initialize-era requests), `notifications/cancelled` never reaches the SDK: the tracker
 * matches it against active `tools/call`s by the client's id (tombstones, duplicate-id protection),
 * because internal ids mean nothing to clients. Without one (per-request-era requests, which end a
 * call by ending its HTTP request) a call ends with its request's lifetime.
 */
export class SessionlessTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;
  /** Delivers a request straight to the connected server's request handling; `onmessage` when unset. */
  deliverRequest: ((message: JSONRPCRequest, extra?: MessageExtraInfo) => void) | undefined = undefined;
  /** Serves a `tools/call` without the SDK's request entry when it can (see `directToolCall`); the entry when unset. */
  directCall: DirectToolCall | undefined = undefined;

  readonly #tracker: CancellationTracker | undefined;
  readonly #resultJson: (result: unknown) => string | undefined;
  readonly #active = new SlotMap<number, ActiveRequest>();
  #nextId = 0;
  #closed = false;
  /** The internal id being delivered with a classification, and whether the SDK refused it meanwhile. */
  #delivering = 0;
  #refused = false;

  constructor(tracker: CancellationTracker | undefined, resultJson: (result: unknown) => string | undefined) {
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
        active.call.abortSource.complete();
      }
      if (id === this.#delivering) {
        this.#refused = true;
        return;
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

  /**
   * Dispatches one client request of `exchange`; `lifetime` aborts its capability call (deadline,
   * disconnect). With a `classification` the request is checked by the SDK the way its per-request
   * entry checks it: when the SDK refuses it before any handler ran (an answer during delivery), the
   * refusal is dropped, nothing was answered or executed, and the result is false so the caller can
   * have the request answered by the SDK's own entry, which owns those answers and their HTTP statuses.
   */
  dispatchRequest(
    exchange: Exchange,
    message: JSONRPCRequest,
    rawBody: string | undefined,
    lifetime: AbortHook | undefined,
    classification?: MessageClassification,
  ): boolean {
    if (this.#closed) {
      exchange.close();
      return true;
    }
    const id = ++this.#nextId;
    const rawId = idToken(message.id, rawBody);
    const call = message.method === 'tools/call' ? this.#beginCall(exchange, message, rawBody, rawId, lifetime) : undefined;
    this.#active.set(id, { exchange, rawId, call });
    // Not `{ ...message, id }`: on Node 20 a spread object extended afterwards gets a hidden class of
    // its own and outlives young-generation collections with everything it references.
    const internal: JSONRPCRequest =
      message.params === undefined ? { jsonrpc: '2.0', id, method: message.method } : { jsonrpc: '2.0', id, method: message.method, params: message.params };
    if (call !== undefined && this.directCall !== undefined) {
      const served = this.directCall(internal, call);
      if (served !== undefined) {
        this.#answer(id, served);
        return true;
      }
    }
    if (classification === undefined) {
      this.#deliver(internal, undefined);
      return true;
    }
    this.#delivering = id;
    this.#refused = false;
    try {
      this.#deliver(internal, { classification });
    } finally {
      this.#delivering = 0;
    }
    return !this.#refused;
  }

  /** Answers internal request `id` with the direct entry's outcome, as the SDK's entry would. */
  #answer(id: number, served: Promise<unknown>): void {
    served.then(
      (result) => this.send({ jsonrpc: '2.0', id, result: result as never }),
      () => this.send({ jsonrpc: '2.0', id, error: { code: JsonRpcErrorCode.InternalError, message: 'Internal error' } }),
    );
  }

  #deliver(message: JSONRPCRequest, extra: MessageExtraInfo | undefined): void {
    if (this.deliverRequest !== undefined) this.deliverRequest(message, extra);
    else this.onmessage?.(message, extra);
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
        this.#tracker?.cancel(key, typeof params?.reason === 'string' ? params.reason : 'cancelled by the client');
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

  /** The name style the request with internal id `internalId` selected, if it selected one. */
  toolNamesOf(internalId: RequestId): ToolNameStyle | undefined {
    return this.#active.get(internalId as number)?.exchange.toolNames;
  }

  /** Number of requests dispatched and not answered yet. */
  get activeCount(): number {
    return this.#active.size;
  }

  /** Aborts the calls of one exchange, e.g. when its client stopped reading the stream. */
  abortExchange(exchange: Exchange, reason: unknown): void {
    for (const active of this.#active.values()) if (active.exchange === exchange) active.call?.abortSource.abort(reason);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const active of this.#active.values()) {
      if (active.call !== undefined) {
        active.call.detach();
        active.call.abortSource.abort(new Error('server closed'));
        active.call.abortSource.complete();
      }
      active.exchange.close();
    }
    this.#active.clear();
    this.onclose?.();
  }

  #beginCall(exchange: Exchange, message: JSONRPCRequest, rawBody: string | undefined, rawId: string, lifetime: AbortHook | undefined): ActiveCall {
    let abortSource: CallAbort;
    if (this.#tracker === undefined) {
      abortSource = new CallLatch();
    } else {
      let key;
      try {
        key = requestIdKeyFromMessage(message.id, rawBody ?? '', 'id');
      } catch {
        key = requestIdKeyFromMessage(String(message.id), '', 'id');
      }
      abortSource = this.#tracker.register(key);
    }
    const detach = lifetime === undefined ? NOOP : lifetime.subscribe((reason) => abortSource.abort(reason));
    const requestId = typeof message.id === 'string' ? message.id : rawId;
    return new ActiveCall(abortSource, requestId, detach, exchange.canStream, requestClientOf(lifetime));
  }
}
