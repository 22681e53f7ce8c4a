import { delay, waitFor } from '@capnode/toolkit';
import type WebSocket from 'ws';
import { OpenAgentChannelError } from './channelError.js';

/** Writes pause while more than this is buffered in the socket (desktop `SOCKET_BUFFER_HIGH_WATER_BYTES`). */
export const SEND_HIGH_WATER_BYTES = 1024 * 1024;
/** A send buffer that does not drain, or a write not done, within this long means the transport is lost. */
export const SEND_STALL_MS = 30_000;
const BUFFER_POLL_MS = 10;

/** Serialized writes on one socket; each resolves once `ws` has written the frame. */
export interface SocketWriter {
  /** Queues a frame; `encode` runs when the frame reaches the head of the queue (so big frames are built one at a time). */
  send(encode: () => string, options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** Every later send fails with `capability_transport_lost`. */
  stop(): void;
}

const lost = (message: string) => new OpenAgentChannelError('capability_transport_lost', message);

/**
 * One queue of writes for `socket`: a write waits for the one before it, pauses while the socket
 * buffers more than {@link SEND_HIGH_WATER_BYTES}, and fails the transport after {@link SEND_STALL_MS}
 * without progress. A failed write does not block the next one.
 */
export function createSocketWriter(socket: WebSocket, stallMs = SEND_STALL_MS): SocketWriter {
  let tail: Promise<void> = Promise.resolve();
  let stopped = false;
  const check = (signal: AbortSignal | undefined) => {
    if (stopped || socket.readyState !== socket.OPEN) throw lost('the capability WebSocket closed during a send');
    if (signal?.aborted) throw lost('the send was cancelled');
  };
  const write = async (encode: () => string, signal: AbortSignal | undefined) => {
    check(signal);
    const started = Date.now();
    while (socket.bufferedAmount > SEND_HIGH_WATER_BYTES) {
      if (Date.now() - started >= stallMs) throw lost('the capability WebSocket send buffer did not drain');
      await delay(BUFFER_POLL_MS, signal ? { signal } : {}).catch(() => undefined);
      check(signal);
    }
    const text = encode();
    await waitFor(
      new Promise<void>((resolve, reject) => {
        socket.send(text, (error) => (error ? reject(lost(error.message)) : resolve()));
      }),
      { timeoutMs: stallMs, ...(signal ? { signal } : {}), timeoutReason: () => lost('a capability WebSocket write did not complete') },
    );
  };
  return {
    send(encode, options = {}) {
      const task = tail.then(() => write(encode, options.signal));
      tail = task.catch(() => undefined);
      return task;
    },
    stop() {
      stopped = true;
    },
  };
}
