import type { Readable, Writable } from 'node:stream';
import { defineErrorClass, waitFor } from '@capnode/toolkit';

/** A failure of the DevTools connection: the browser answered with an error, or the pipe closed. */
export class CdpError extends defineErrorClass('CdpError', ['protocol', 'closed', 'too_large']) {}

/** Largest single DevTools message read (a full-size screenshot is far below it). */
export const MAX_CDP_MESSAGE_BYTES = 128 * 1024 * 1024;

/** An event of the browser or of one attached target (`sessionId`). */
export type CdpListener = (params: Record<string, unknown>, sessionId: string | undefined) => void;

/** Options of one {@link CdpConnection.send}. */
export interface CdpSendOptions {
  /** The attached target to address; absent addresses the browser. */
  readonly sessionId?: string;
  /** Aborting stops waiting for the answer (the browser may still carry the command out). */
  readonly signal?: AbortSignal;
}

/** The Chrome DevTools Protocol over the browser's `--remote-debugging-pipe` (NUL-separated JSON messages). */
export interface CdpConnection {
  send<T = Record<string, unknown>>(method: string, params?: Record<string, unknown>, options?: CdpSendOptions): Promise<T>;
  /** Listens to an event by method name (`Page.loadEventFired`); returns the function that stops listening. */
  on(method: string, listener: CdpListener): () => void;
  /** Rejects every pending command with `closed`; later sends fail at once. Idempotent. */
  close(): void;
  readonly isClosed: boolean;
}

interface Pending {
  resolve(value: Record<string, unknown>): void;
  reject(error: unknown): void;
}

interface Incoming {
  readonly id?: number;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly message?: string };
  readonly sessionId?: string;
}

/**
 * Speaks DevTools to a browser over its pipe: `toBrowser` is the browser's fd 3, `fromBrowser` its
 * fd 4. No port is opened, so no other local process can reach the browser's debugger.
 */
export function createCdpConnection(toBrowser: Writable, fromBrowser: Readable): CdpConnection {
  const pending = new Map<number, Pending>();
  const listeners = new Map<string, Set<CdpListener>>();
  let chunks: Buffer[] = [];
  let buffered = 0;
  let nextId = 0;
  let closed = false;

  const dispatch = (message: Incoming): void => {
    if (message.id !== undefined) {
      const entry = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) entry?.reject(new CdpError('protocol', message.error.message ?? 'DevTools error'));
      else entry?.resolve(message.result ?? {});
      return;
    }
    if (message.method === undefined) return;
    for (const listener of listeners.get(message.method) ?? []) listener(message.params ?? {}, message.sessionId);
  };

  const onData = (data: Buffer): void => {
    let start = 0;
    let end = data.indexOf(0, start);
    while (end !== -1) {
      chunks.push(data.subarray(start, end));
      const text = Buffer.concat(chunks).toString('utf8');
      chunks = [];
      buffered = 0;
      try {
        dispatch(JSON.parse(text) as Incoming);
      } catch {
        // A message that is not JSON is the browser's bug; the command it answered times out.
      }
      start = end + 1;
      end = data.indexOf(0, start);
    }
    if (start < data.length) {
      chunks.push(data.subarray(start));
      buffered += data.length - start;
      if (buffered > MAX_CDP_MESSAGE_BYTES) close(new CdpError('too_large', 'A DevTools message exceeded its size limit.'));
    }
  };

  const close = (reason: unknown = new CdpError('closed', 'The browser closed its DevTools connection.')): void => {
    if (closed) return;
    closed = true;
    fromBrowser.off('data', onData);
    for (const entry of pending.values()) entry.reject(reason);
    pending.clear();
    chunks = [];
  };

  fromBrowser.on('data', onData);
  fromBrowser.once('close', () => close());
  fromBrowser.on('error', () => close());
  toBrowser.on('error', () => close());

  return {
    send<T>(method: string, params: Record<string, unknown> = {}, options: CdpSendOptions = {}): Promise<T> {
      if (closed) return Promise.reject(new CdpError('closed', 'The browser is not running.'));
      const id = ++nextId;
      const answer = new Promise<Record<string, unknown>>((resolve, reject) => pending.set(id, { resolve, reject }));
      toBrowser.write(`${JSON.stringify({ id, method, params, ...(options.sessionId ? { sessionId: options.sessionId } : {}) })}\0`);
      const waited = options.signal ? waitFor(answer, { signal: options.signal }) : answer;
      return waited.finally(() => pending.delete(id)) as Promise<T>;
    },
    on(method, listener) {
      const set = listeners.get(method) ?? new Set<CdpListener>();
      listeners.set(method, set);
      set.add(listener);
      return () => set.delete(listener);
    },
    close: () => close(),
    get isClosed() {
      return closed;
    },
  };
}
