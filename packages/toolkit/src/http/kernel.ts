import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SlotMap } from '../slotMap.js';
import { MAX_TIMER_MS } from '../deadline.js';
import { AbortLatch } from './abortLatch.js';
import { Admission } from './admission.js';
import { textReply, type HttpReply } from './reply.js';
import { writeAnswer } from './write.js';
import { isLoopbackAddress } from '../loopback.js';
import { armListedTimer, clearListedTimer, type ListedTimer, type TimerList } from '../timerLists.js';

/** What a handler answers: a reply or web `Response` the kernel writes, or nothing when it wrote the response itself. */
export type KernelAnswer = HttpReply | Response | void;

/**
 * One admitted request: the abort source of the work it starts (deadline, client gone, shutdown), its
 * Node response, and whether it was answered.
 */
export class KernelRequest extends AbortLatch {
  readonly outgoing: ServerResponse;
  /** Set once an answer was written (or the handler took over writing). */
  answered = false;
  /** Whether it still holds a concurrency slot (a long-lived stream gives it back with {@link detach}). */
  admitted = true;
  #release: (() => void) | undefined;
  #finish: Array<() => void> | undefined;

  constructor(outgoing: ServerResponse, release: () => void) {
    super();
    this.outgoing = outgoing;
    this.#release = release;
  }

  /** Calls `listener` once the response closed. */
  onFinish(listener: () => void): void {
    (this.#finish ??= []).push(listener);
  }

  /** Ends the deadline and gives the slot back: the request lives on as a stream. */
  detach(): void {
    // The kernel's requests are `AdmittedRequest`s, their own deadline's timer-list entry.
    clearListedTimer(this as unknown as ListedTimer);
    this.releaseSlot();
  }

  releaseSlot(): void {
    const release = this.#release;
    this.#release = undefined;
    this.admitted = false;
    release?.();
  }

  finished(): void {
    const listeners = this.#finish;
    this.#finish = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
  }
}

/** A request as the kernel admits it: its own deadline timer entry (see `timerLists.ts`) and close hook. */
class AdmittedRequest extends KernelRequest implements ListedTimer {
  timerDue = -1;
  timerPrev: ListedTimer | undefined = undefined;
  timerNext: ListedTimer | undefined = undefined;
  timerList: TimerList | undefined = undefined;
  timerFallback: ReturnType<typeof setTimeout> | undefined = undefined;
  readonly #onDeadline: ((request: KernelRequest) => void) | undefined;
  #onClosed: ((request: AdmittedRequest) => void) | undefined;

  constructor(outgoing: ServerResponse, release: () => void, onClosed: (request: AdmittedRequest) => void, onDeadline: ((request: KernelRequest) => void) | undefined) {
    super(outgoing, release);
    this.#onClosed = onClosed;
    this.#onDeadline = onDeadline;
  }

  /** The response closed. */
  closed(): void {
    const onClosed = this.#onClosed;
    this.#onClosed = undefined;
    onClosed?.(this);
  }

  /** The deadline passed. */
  onTimer(): void {
    this.#onDeadline?.(this);
  }
}

/** The replies a kernel writes itself; each listener keeps its own texts and shapes. */
export interface KernelReplies {
  /** A peer that is not loopback. */
  readonly forbiddenPeer: HttpReply;
  /** A request arriving while the listener drains. */
  readonly shuttingDown: HttpReply;
  /** No concurrency slot freed up within the admission wait. */
  readonly busy: HttpReply;
  /** Past the request deadline, before anything was written. */
  readonly timeout: HttpReply;
  /** The handler threw or rejected. */
  readonly internal: HttpReply;
  /** More than one Host header (which Node would silently reduce to the first). Default a plain-text 400. */
  readonly duplicateHost?: HttpReply;
}

export interface HttpKernelOptions<Route> {
  /** Requests served at once; more wait up to `admissionWaitMs` for a slot, then get `replies.busy`. Default: no cap. */
  readonly maxConcurrency?: number;
  /** Default 50. */
  readonly admissionWaitMs?: number;
  /** Deadline over body read and dispatch; past it the request aborts and gets `replies.timeout`. Default: none. */
  readonly requestTimeoutMs?: number;
  /**
   * Gates before admission, after the loopback-peer gate: a reply refuses the request, anything else is
   * handed to `handle` as its route (e.g. the canonical path).
   */
  readonly admit?: (incoming: IncomingMessage) => { readonly refuse: HttpReply } | { readonly route: Route };
  /** The listener's one handler. */
  readonly handle: (incoming: IncomingMessage, request: KernelRequest, route: Route) => KernelAnswer | Promise<KernelAnswer>;
  readonly replies: KernelReplies;
  readonly onLog: (level: 'error' | 'warning', message: string) => void;
}

/** How {@link HttpKernel.drain} ends the requests in flight. */
export interface DrainOptions {
  /** How long admitted requests may finish before they are aborted. */
  readonly drainTimeoutMs: number;
  /** Abort every request at once (ending its streams) and then wait, instead of waiting first. */
  readonly abortFirst?: boolean;
  /** Runs after the drain wait, before what is left is aborted and every connection dropped. */
  readonly beforeCut?: () => Promise<void>;
}

/** The node adapter under every capnode listener: admission, deadline, disconnect abort, drain, and the writes. */
export interface HttpKernel {
  /** The `node:http` request listener. */
  readonly listener: (incoming: IncomingMessage, outgoing: ServerResponse) => void;
  /** Requests holding a concurrency slot. */
  readonly active: number;
  /** Writes `answer` for `request` once (later answers are ignored). */
  answer(request: KernelRequest, answer: KernelAnswer): void;
  /** Stops accepting, closes idle connections, drains in-flight requests, aborts what is left, drops every connection. */
  drain(server: Server, options: DrainOptions): Promise<void>;
}

const ABORT_GRACE_MS = 1000;

const DUPLICATE_HOST = textReply(400, 'Bad Request: more than one Host header.\n', { connection: 'close' });

/**
 * True when the request carries more than one Host header. Node keeps only the first in `headers`, so
 * a gate reading `headers.host` would judge a request whose other Host a proxy or handler might use.
 */
function hasDuplicateHost(incoming: IncomingMessage): boolean {
  const raw = incoming.rawHeaders;
  let seen = false;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

const CLOSE_WATCH = Symbol('capnode.kernelRequest');

interface WatchedResponse extends ServerResponse {
  [CLOSE_WATCH]?: AdmittedRequest;
}

function onResponseClose(this: WatchedResponse): void {
  this[CLOSE_WATCH]?.closed();
}

/**
 * Calls the request's `onClosed` once its response closed. One shared listener reads the request off
 * the response, instead of a `once` wrapper and a closure per request (a response closes once).
 */
function watchClose(request: AdmittedRequest): void {
  const outgoing = request.outgoing as WatchedResponse;
  outgoing[CLOSE_WATCH] = request;
  outgoing.on('close', onResponseClose);
}

function timeoutError(message: string): Error {
  const error = new Error(message);
  error.name = 'TimeoutError';
  return error;
}

/** Builds the kernel of one listener. */
export function createHttpKernel<Route>(options: HttpKernelOptions<Route>): HttpKernel {
  const { replies, onLog } = options;
  const admission = new Admission(options.maxConcurrency ?? Number.POSITIVE_INFINITY, options.admissionWaitMs ?? 50);
  // Not a Set: see SlotMap for why per-request entries stay out of long-lived hash tables.
  const live = new SlotMap<KernelRequest, true>();
  const timeoutMs = options.requestTimeoutMs;
  if (timeoutMs !== undefined && !(timeoutMs >= 0 && Number.isFinite(timeoutMs))) throw new RangeError(`requestTimeoutMs must be a finite number >= 0, got ${String(timeoutMs)}`);
  const deadlineMs = Math.min(Math.ceil(timeoutMs ?? 0), MAX_TIMER_MS);
  let closing = false;

  const answer = (request: KernelRequest, reply: KernelAnswer): void => {
    if (request.answered || reply === undefined) return;
    request.answered = true;
    const outgoing = request.outgoing;
    if (outgoing.destroyed) return;
    writeAnswer(outgoing, reply)?.catch((error: unknown) => {
      onLog('error', `http: failed to write a response: ${String(error)}`);
      outgoing.destroy();
    });
  };

  const onDeadline = (request: KernelRequest): void => {
    request.abort(timeoutError(`request exceeded ${timeoutMs} ms`));
    if (request.answered || request.outgoing.headersSent) request.outgoing.destroy();
    else answer(request, replies.timeout);
  };

  const release = (): void => admission.release();
  const onClosed = (request: AdmittedRequest): void => {
    clearListedTimer(request);
    live.delete(request);
    if (!request.outgoing.writableFinished) request.abort(new Error('client disconnected'));
    request.releaseSlot();
    request.finished();
  };
  const serveAdmitted = (incoming: IncomingMessage, outgoing: ServerResponse, route: Route): void => {
    const request = new AdmittedRequest(outgoing, release, onClosed, timeoutMs === undefined ? undefined : onDeadline);
    live.set(request, true);
    if (timeoutMs !== undefined) armListedTimer(request, deadlineMs, false);
    watchClose(request);
    let reply: KernelAnswer | Promise<KernelAnswer>;
    try {
      reply = options.handle(incoming, request, route);
    } catch (error) {
      reply = Promise.reject(error);
    }
    if (!(reply instanceof Promise)) {
      answer(request, reply);
      return;
    }
    reply.then(
      (value) => answer(request, value),
      (error: unknown) => {
        onLog('error', `http: unhandled ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
        const outgoing = request.outgoing;
        if (outgoing.headersSent && !outgoing.writableEnded) outgoing.destroy();
        else answer(request, replies.internal);
      },
    );
  };

  const listener = (incoming: IncomingMessage, outgoing: ServerResponse): void => {
    if (!isLoopbackAddress(incoming.socket.remoteAddress)) {
      void writeAnswer(outgoing, replies.forbiddenPeer);
      return;
    }
    if (hasDuplicateHost(incoming)) {
      void writeAnswer(outgoing, replies.duplicateHost ?? DUPLICATE_HOST);
      return;
    }
    const admitted = options.admit?.(incoming) ?? { route: undefined as Route };
    if ('refuse' in admitted) {
      void writeAnswer(outgoing, admitted.refuse);
      return;
    }
    const route = admitted.route;
    if (closing) {
      void writeAnswer(outgoing, replies.shuttingDown);
      return;
    }
    if (admission.tryAcquire()) {
      serveAdmitted(incoming, outgoing, route);
      return;
    }
    void admission.acquire().then((ok) => {
      if (ok) serveAdmitted(incoming, outgoing, route);
      else void writeAnswer(outgoing, replies.busy);
    });
  };

  const drain = async (server: Server, drainOptions: DrainOptions): Promise<void> => {
    closing = true;
    const { drainTimeoutMs } = drainOptions;
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    if (drainOptions.abortFirst === true) {
      for (const entry of live.keys()) entry.abort(new Error('server shutting down'));
      await admission.idle(drainTimeoutMs);
    } else if (!(await admission.idle(drainTimeoutMs))) {
      onLog('warning', `shutdown: aborting ${admission.active} request(s) still in flight after ${drainTimeoutMs} ms`);
      for (const entry of live.keys()) if (entry.admitted) entry.abort(new Error('server shutting down'));
      await admission.idle(ABORT_GRACE_MS);
    }
    await drainOptions.beforeCut?.();
    for (const entry of live.keys()) entry.abort(new Error('server shutting down'));
    server.closeAllConnections();
    await stopped;
  };

  return {
    listener,
    get active() {
      return admission.active;
    },
    answer,
    drain,
  };
}

/** Listens on `host`:`port` and resolves with the bound address, or rejects with the listen error. */
export async function listenOn(server: Server, port: number, host: string): Promise<AddressInfo> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  return server.address() as AddressInfo;
}

/** `http://host:port` of a bound address (IPv6 in brackets). */
export function originOf(address: AddressInfo): string {
  return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
}
