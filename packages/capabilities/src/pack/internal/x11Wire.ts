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
  /**
   * Sends a request that has a reply and resolves with the reply (32-byte header included). The reply
   * is written into `into` when it fits, and then aliases it.
   */
  request(bytes: Buffer, what: string, signal?: AbortSignal, into?: Buffer): Promise<Buffer>;
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
  /** Where the reply is written when it fits. */
  readonly into?: Buffer | undefined;
}

const X11_ERROR_NAMES: Record<number, string> = { 1: 'BadRequest', 2: 'BadValue', 3: 'BadWindow', 8: 'BadMatch', 9: 'BadDrawable', 11: 'BadAlloc', 16: 'BadLength', 17: 'BadImplementation' };

/** Bytes the packet at the start of `buffer` needs in all (setup reply, or a reply/error/event). */
function packetLength(buffer: Buffer, setupDone: boolean): number {
  if (!setupDone) return buffer.length < 8 ? 8 : 8 + buffer.readUInt16LE(6) * 4;
  if (buffer.length < 32) return 32;
  return buffer.readUInt8(0) === 1 ? 32 + buffer.readUInt32LE(4) * 4 : 32;
}

function cancelledError(): CapabilityError {
  return new CapabilityError('cancelled', 'The screenshot was cancelled.');
}

function x11Error(packet: Buffer): CapabilityError {
  const code = packet.readUInt8(1);
  const error = new CapabilityError('failed', `The X server refused a request: ${X11_ERROR_NAMES[code] ?? `error ${code}`} (request ${packet.readUInt8(10)}.${packet.readUInt16LE(8)}).`);
  (error as { x11Code?: number }).x11Code = code;
  return error;
}

/**
 * Largest reply taken without a buffer of the request's own: the header names the length before the
 * bytes arrive, so a broken or hostile server must not make capnode allocate what it names.
 */
const MAX_REPLY_BYTES = 64 * 1024 * 1024;

/** Bytes read off the socket at a time into one buffer kept for the connection (no allocation per read). */
const READ_BUFFER_BYTES = 256 * 1024;

/**
 * Cuts the byte stream into packets (the setup reply first, then replies, errors and events), copying
 * each byte once into its packet: a chunk may be reused by the caller once `push` returns, and a
 * large reply (an 8 MB GetImage) is one allocation, not its chunks plus their concatenation.
 */
export class PacketFramer {
  readonly #header = Buffer.alloc(32);
  #headerFilled = 0;
  #packet: Buffer | undefined = undefined;
  #filled = 0;
  #setupDone = false;
  /** Gets each whole packet; `setup` marks the first, the setup reply. */
  readonly #deliver: (packet: Buffer, setup: boolean) => void;
  /** Where a packet after the setup reply goes, given its 32-byte header and its whole length. */
  readonly #allocate: (header: Buffer, bytes: number) => Buffer;

  constructor(deliver: (packet: Buffer, setup: boolean) => void, allocate: (header: Buffer, bytes: number) => Buffer) {
    this.#deliver = deliver;
    this.#allocate = allocate;
  }

  /** Takes the next bytes of the stream; always true (a socket's `onread` would pause on false). */
  push(chunk: Buffer): true {
    let at = 0;
    while (at < chunk.length) {
      if (this.#packet === undefined) {
        const headerBytes = this.#setupDone ? 32 : 8;
        const take = Math.min(headerBytes - this.#headerFilled, chunk.length - at);
        chunk.copy(this.#header, this.#headerFilled, at, at + take);
        this.#headerFilled += take;
        at += take;
        if (this.#headerFilled < headerBytes) return true;
        const header = this.#header.subarray(0, headerBytes);
        const bytes = packetLength(header, this.#setupDone);
        const packet = this.#setupDone ? this.#allocate(header, bytes) : Buffer.allocUnsafe(bytes);
        this.#header.copy(packet, 0, 0, headerBytes);
        this.#packet = packet;
        this.#filled = headerBytes;
        this.#headerFilled = 0;
      }
      const packet = this.#packet;
      const take = Math.min(packet.length - this.#filled, chunk.length - at);
      chunk.copy(packet, this.#filled, at, at + take);
      this.#filled += take;
      at += take;
      if (this.#filled < packet.length) return true;
      this.#packet = undefined;
      const setup = !this.#setupDone;
      this.#setupDone = true;
      this.#deliver(packet, setup);
    }
    return true;
  }
}

/** Connects to the display; what arrives goes to `framer` through one read buffer kept for the connection. */
function connectSocket(address: net.NetConnectOpts, framer: PacketFramer, broken: (error: Error) => void): net.Socket {
  const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  const read = (bytes: number): boolean => {
    try {
      return framer.push(buffer.subarray(0, bytes));
    } catch (error) {
      // The stream is out of step (a packet capnode will not take): end the connection, not the process.
      broken(error as Error);
      socket.destroy();
      return false;
    }
  };
  const socket = net.connect({ ...address, onread: { buffer, callback: read } });
  socket.setNoDelay(true);
  return socket;
}

/** Opens the socket of an X display and frames what it sends. */
export function openX11Wire(address: net.NetConnectOpts, display: string, timeoutMs: number): X11Wire {
  let setupWaiter: PendingReply | undefined;
  let sequence = 0;
  let brokenBy: Error | undefined;
  const pending = new Map<number, PendingReply>();

  const failAll = (error: Error) => {
    brokenBy ??= error;
    setupWaiter?.reject(error);
    setupWaiter = undefined;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  const deliver = (packet: Buffer, setup: boolean) => {
    if (setup) {
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
  // A reply goes into the buffer its request brought when it fits (repeated screenshots reuse one).
  const framer = new PacketFramer(deliver, (header, bytes) => {
    const into = header.readUInt8(0) === 1 ? pending.get(header.readUInt16LE(2))?.into : undefined;
    if (into !== undefined && into.length >= bytes) return into.subarray(0, bytes);
    if (bytes > MAX_REPLY_BYTES) throw new CapabilityError('failed', `The X display ${display} sent a reply of ${bytes} bytes, more than capnode takes (${MAX_REPLY_BYTES}).`);
    return Buffer.allocUnsafe(bytes);
  });
  const socket = connectSocket(address, framer, failAll);
  socket.on('error', (error) => failAll(new CapabilityError('unavailable', `unavailable here: cannot reach the X display ${display}: ${error.message}`, { cause: error })));
  socket.on('close', () => failAll(new CapabilityError('failed', `The X display ${display} closed the connection.`)));

  /** A deadline and the caller's signal over one answer; either breaks the connection (its stream is then out of step). */
  const bounded = (answer: Promise<Buffer>, what: string, signal: AbortSignal | undefined): Promise<Buffer> => {
    if (signal?.aborted) return Promise.reject(cancelledError());
    return new Promise<Buffer>((resolve, reject) => {
      const deadline = armDeadline(signal === undefined ? { timeoutMs } : { timeoutMs, signal }, (_reason, timedOut) => {
        reject(
          timedOut
            ? new CapabilityError('timeout', `The X display ${display} did not answer ${what} within ${timeoutMs / 1000} s.`)
            : cancelledError(),
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
    request(bytes, what, signal, into) {
      if (brokenBy) return Promise.reject(brokenBy);
      // Before sending: a reply nobody waits for would still stream into `into`.
      if (signal?.aborted) return Promise.reject(cancelledError());
      sequence = (sequence + 1) & 0xffff;
      const seq = sequence;
      socket.write(bytes);
      return bounded(new Promise<Buffer>((resolve, reject) => pending.set(seq, { resolve, reject, into })), what, signal);
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
