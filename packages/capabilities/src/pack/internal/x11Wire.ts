import net from 'node:net';
import { CapabilityError } from '../../errors.js';
import { armDeadline } from '@capnode/toolkit';

/**
 * The byte stream of one X11 connection: frames the setup reply and then 32-byte packets (replies
 * with their extra length, errors, events), matches replies and errors to requests by sequence
 * number, and applies a deadline and an optional AbortSignal to each request.
 */
export interface X11Wire {
  /** Sends the setup request and resolves with the whole setup reply (header included). */
  setup(request: Buffer, signal: AbortSignal | undefined): Promise<Buffer>;
  /** Sends a request that has a reply and resolves with the reply (32-byte header included). */
  request(bytes: Buffer, what: string, signal?: AbortSignal): Promise<Buffer>;
  /** Sends a request that has no reply; an error it causes is dropped (follow with a request to learn of it). */
  send(bytes: Buffer): void;
  readonly broken: boolean;
  unref(): void;
  destroy(): void;
  /** Half-closes and waits for the server to hang up (at most 1 s). */
  end(): Promise<void>;
}

interface PendingReply {
  readonly resolve: (reply: Buffer) => void;
  readonly reject: (error: Error) => void;
}

const X11_ERROR_NAMES: Record<number, string> = { 1: 'BadRequest', 2: 'BadValue', 3: 'BadWindow', 8: 'BadMatch', 9: 'BadDrawable', 11: 'BadAlloc', 16: 'BadLength', 17: 'BadImplementation' };

/** Bytes the packet at the start of `buffer` needs in all (setup reply, or a reply/error/event). */
function packetLength(buffer: Buffer, setupDone: boolean): number {
  if (!setupDone) return buffer.length < 8 ? 8 : 8 + buffer.readUInt16LE(6) * 4;
  if (buffer.length < 32) return 32;
  return buffer.readUInt8(0) === 1 ? 32 + buffer.readUInt32LE(4) * 4 : 32;
}

function x11Error(packet: Buffer): CapabilityError {
  const code = packet.readUInt8(1);
  const error = new CapabilityError('failed', `The X server refused a request: ${X11_ERROR_NAMES[code] ?? `error ${code}`} (request ${packet.readUInt8(10)}.${packet.readUInt16LE(8)}).`);
  (error as { x11Code?: number }).x11Code = code;
  return error;
}

/** Opens the socket of an X display and frames what it sends. */
export function openX11Wire(socket: net.Socket, display: string, timeoutMs: number): X11Wire {
  socket.setNoDelay(true);
  let buffer: Buffer = Buffer.alloc(0);
  let setupWaiter: PendingReply | undefined;
  let setupDone = false;
  let sequence = 0;
  let brokenBy: Error | undefined;
  const pending = new Map<number, PendingReply>();
  const chunks: Buffer[] = [];
  let chunkBytes = 0;
  let need = 8;

  const failAll = (error: Error) => {
    brokenBy ??= error;
    setupWaiter?.reject(error);
    setupWaiter = undefined;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  const deliver = (packet: Buffer) => {
    if (!setupDone) {
      setupDone = true;
      setupWaiter?.resolve(packet);
      setupWaiter = undefined;
      return;
    }
    const kind = packet.readUInt8(0);
    if (kind > 1) return; // An event: screenshots select none, but the server may send some.
    const waiter = pending.get(packet.readUInt16LE(2));
    if (!waiter) return;
    pending.delete(packet.readUInt16LE(2));
    if (kind === 1) waiter.resolve(packet);
    else waiter.reject(x11Error(packet));
  };
  socket.on('data', (chunk: Buffer) => {
    // Large replies (an 8 MB GetImage) arrive in many chunks: gather them and concatenate once.
    chunks.push(chunk);
    chunkBytes += chunk.length;
    if (buffer.length + chunkBytes < need) return;
    buffer = buffer.length === 0 && chunks.length === 1 ? chunks[0]! : Buffer.concat([buffer, ...chunks]);
    chunks.length = 0;
    chunkBytes = 0;
    for (;;) {
      const total = packetLength(buffer, setupDone);
      if (buffer.length < total) break;
      const packet = buffer.length === total ? buffer : buffer.subarray(0, total);
      buffer = buffer.length === total ? Buffer.alloc(0) : buffer.subarray(total);
      deliver(packet);
    }
    need = packetLength(buffer, setupDone);
  });
  socket.on('error', (error) => failAll(new CapabilityError('unavailable', `unavailable here: cannot reach the X display ${display}: ${error.message}`, { cause: error })));
  socket.on('close', () => failAll(new CapabilityError('failed', `The X display ${display} closed the connection.`)));

  /** A deadline and the caller's signal over one answer; either breaks the connection (its stream is then out of step). */
  const bounded = (answer: Promise<Buffer>, what: string, signal: AbortSignal | undefined): Promise<Buffer> => {
    if (signal?.aborted) return Promise.reject(new CapabilityError('cancelled', 'The screenshot was cancelled.'));
    return new Promise<Buffer>((resolve, reject) => {
      const deadline = armDeadline(signal === undefined ? { timeoutMs } : { timeoutMs, signal }, (_reason, timedOut) => {
        reject(
          timedOut
            ? new CapabilityError('timeout', `The X display ${display} did not answer ${what} within ${timeoutMs / 1000} s.`)
            : new CapabilityError('cancelled', 'The screenshot was cancelled.'),
        );
        socket.destroy();
      });
      answer.then(
        (value) => {
          deadline.clear();
          resolve(value);
        },
        (error: unknown) => {
          deadline.clear();
          reject(error);
        },
      );
    });
  };

  return {
    setup(request, signal) {
      return bounded(
        new Promise<Buffer>((resolve, reject) => {
          setupWaiter = { resolve, reject };
          socket.write(request);
        }),
        'the connection setup',
        signal,
      );
    },
    request(bytes, what, signal) {
      if (brokenBy) return Promise.reject(brokenBy);
      sequence = (sequence + 1) & 0xffff;
      const seq = sequence;
      socket.write(bytes);
      return bounded(new Promise<Buffer>((resolve, reject) => pending.set(seq, { resolve, reject })), what, signal);
    },
    send(bytes) {
      if (brokenBy) throw brokenBy;
      sequence = (sequence + 1) & 0xffff;
      socket.write(bytes);
    },
    get broken() {
      return brokenBy !== undefined || socket.destroyed;
    },
    unref: () => void socket.unref(),
    destroy: () => void socket.destroy(),
    end: () =>
      new Promise<void>((resolve) => {
        if (socket.destroyed) return resolve();
        socket.once('close', () => resolve());
        socket.end();
        setTimeout(() => socket.destroy(), 1_000).unref();
      }),
  };
}
