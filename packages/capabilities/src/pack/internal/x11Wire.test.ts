import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PacketFramer, openX11Wire } from './x11Wire.js';

/** A setup reply (8-byte header, `words` more words), then replies/events as the server sends them. */
function setupReply(words: number): Buffer {
  const packet = Buffer.alloc(8 + words * 4, 0x5a);
  packet.writeUInt8(1, 0);
  packet.writeUInt16LE(words, 6);
  return packet;
}

function reply(sequence: number, extraWords: number, fill: number): Buffer {
  const packet = Buffer.alloc(32 + extraWords * 4, fill);
  packet.writeUInt8(1, 0);
  packet.writeUInt16LE(sequence, 2);
  packet.writeUInt32LE(extraWords, 4);
  return packet;
}

function event(fill: number): Buffer {
  const packet = Buffer.alloc(32, fill);
  packet.writeUInt8(12, 0);
  packet.writeUInt16LE(7, 2);
  return packet;
}

describe('PacketFramer', () => {
  const stream = Buffer.concat([setupReply(3), reply(1, 0, 0x11), event(0x22), reply(2, 1000, 0x33), reply(3, 2, 0x44)]);
  const expected = [setupReply(3), reply(1, 0, 0x11), event(0x22), reply(2, 1000, 0x33), reply(3, 2, 0x44)];

  it('cuts the stream into packets however it is split, from one byte at a time to all at once', () => {
    for (const size of [1, 2, 7, 8, 31, 32, 33, 100, 4096, stream.length]) {
      const packets: Buffer[] = [];
      const framer = new PacketFramer((packet) => packets.push(packet), (_header, bytes) => Buffer.alloc(bytes));
      // One read buffer, overwritten by every read, as the socket's `onread` does.
      const readBuffer = Buffer.alloc(size);
      for (let at = 0; at < stream.length; at += size) {
        const bytes = stream.copy(readBuffer, 0, at, Math.min(at + size, stream.length));
        framer.push(readBuffer.subarray(0, bytes));
        readBuffer.fill(0xff);
      }
      expect(packets, `chunks of ${size}`).toEqual(expected);
    }
  });

  it('writes a reply where allocate says (a buffer its request brought), and the setup reply elsewhere', () => {
    const into = Buffer.alloc(8000);
    const headers: number[] = [];
    const packets: Buffer[] = [];
    const framer = new PacketFramer(
      (packet) => packets.push(packet),
      (header, bytes) => {
        headers.push(header.readUInt16LE(2));
        return header.readUInt16LE(2) === 2 ? into.subarray(0, bytes) : Buffer.alloc(bytes);
      },
    );
    framer.push(stream);
    expect(headers).toEqual([1, 7, 2, 3]);
    expect(packets[3]!.buffer).toBe(into.buffer);
    expect(packets[3]).toEqual(reply(2, 1000, 0x33));
  });
});

describe('openX11Wire', () => {
  /** A stand-in server: an empty setup reply, then for request n (4 bytes each) what `answer(n)` gives. */
  async function standIn(answer: (sequence: number) => Buffer) {
    const dir = mkdtempSync(join(tmpdir(), 'capnode-x11wire-'));
    const path = join(dir, 'X0');
    const received: number[] = [];
    const server = createServer((socket) => {
      let sequence = -1;
      let pending = 0;
      socket.on('data', (chunk) => {
        pending += chunk.length;
        if (sequence === -1) {
          sequence = 0;
          pending = 0;
          socket.write(setupReply(0));
          return;
        }
        for (; pending >= 4; pending -= 4) {
          sequence += 1;
          received.push(sequence);
          socket.write(answer(sequence));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(path, resolve));
    const wire = openX11Wire({ path }, ':0', 5_000);
    await wire.setup(Buffer.alloc(12), undefined);
    return {
      wire,
      received,
      async [Symbol.asyncDispose]() {
        wire.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }

  it('refuses a reply that names more bytes than it takes without allocating them, and fails only that connection', async () => {
    // A reply header that claims about 16 GiB.
    await using server = await standIn((sequence) => {
      const header = reply(sequence, 0, 0);
      header.writeUInt32LE(0xffffffff, 4);
      return header;
    });
    await expect(server.wire.request(Buffer.alloc(4), 'GetImage')).rejects.toMatchObject({ code: 'failed', message: expect.stringContaining('more than capnode takes') });
    expect(server.wire.broken).toBe(true);
    await expect(server.wire.request(Buffer.alloc(4), 'GetImage')).rejects.toMatchObject({ code: 'failed' });
  });

  it("writes a reply into its request's buffer when it fits, else into a new one, and leaves the buffer alone on an error", async () => {
    const error = (sequence: number) => {
      const packet = Buffer.alloc(32);
      packet.writeUInt8(0, 0);
      packet.writeUInt8(8, 1); // BadMatch
      packet.writeUInt16LE(sequence, 2);
      return packet;
    };
    await using server = await standIn((sequence) => (sequence === 3 ? error(sequence) : reply(sequence, 100, sequence)));
    const into = Buffer.alloc(1000, 0xee);
    const fits = await server.wire.request(Buffer.alloc(4), 'GetImage', undefined, into);
    expect(fits.buffer).toBe(into.buffer);
    expect(fits).toEqual(reply(1, 100, 1));
    const small = Buffer.alloc(100, 0xee);
    const fresh = await server.wire.request(Buffer.alloc(4), 'GetImage', undefined, small);
    expect(fresh.buffer).not.toBe(small.buffer);
    expect(fresh).toEqual(reply(2, 100, 2));
    expect(small.every((byte) => byte === 0xee)).toBe(true);
    const untouched = Buffer.alloc(1000, 0xee);
    await expect(server.wire.request(Buffer.alloc(4), 'GetImage', undefined, untouched)).rejects.toMatchObject({ code: 'failed', message: expect.stringContaining('BadMatch') });
    expect(untouched.every((byte) => byte === 0xee)).toBe(true);
  });

  it('sends nothing for a request whose signal is already aborted', async () => {
    await using server = await standIn((sequence) => reply(sequence, 0, 0));
    const abort = new AbortController();
    abort.abort();
    await expect(server.wire.request(Buffer.alloc(4), 'GetImage', abort.signal, Buffer.alloc(64))).rejects.toMatchObject({ code: 'cancelled' });
    await server.wire.request(Buffer.alloc(4), 'GetInputFocus');
    expect(server.received).toEqual([1]);
  });
});
