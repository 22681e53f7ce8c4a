import { describe, expect, it } from 'vitest';
import { isHostError } from '../errors.js';
import { MAX_SERVER_SENT_EVENT_LENGTH, readServerSentEvents, type ServerSentEvent } from './serverSentEvents.js';

const encoder = new TextEncoder();

async function* chunks(...parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === 'string' ? encoder.encode(part) : part;
}

async function collect(source: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>, options?: Parameters<typeof readServerSentEvents>[1]): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const event of readServerSentEvents(source, options)) events.push(event);
  return events;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('readServerSentEvents', () => {
  it('reads typed events, joins data lines, defaults the type to message and ignores comments, id, retry and unknown fields', async () => {
    const events = await collect(chunks(': hello\n', 'event: snapshot\ndata: {"a":1}\n\n', 'data: one\ndata:two\ndata\nid: 7\nretry: 10\nfoo: bar\n\n', 'event: empty\n\n'));
    expect(events).toEqual([
      { event: 'snapshot', data: '{"a":1}' },
      { event: 'message', data: 'one\ntwo\n' },
    ]);
  });

  it('accepts LF, CRLF and CR line ends, also when a CRLF or a UTF-8 character is split across chunks', async () => {
    const bytes = encoder.encode('data: é€\r');
    const events = await collect(chunks('event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r', bytes.subarray(0, 7), bytes.subarray(7), '\n', '\r\n', 'data: 3\n', '\n'));
    expect(events).toEqual([
      { event: 'a', data: '1' },
      { event: 'b', data: '2' },
      { event: 'message', data: 'é€' },
      { event: 'message', data: '3' },
    ]);
  });

  it('strips one space after the colon only, and keeps colons in the value', async () => {
    expect(await collect(chunks('data:  two spaces: yes\n\n'))).toEqual([{ event: 'message', data: ' two spaces: yes' }]);
  });

  it('drops an unfinished event at the end of the stream', async () => {
    expect(await collect(chunks('data: done\n\n', 'event: cut\ndata: half'))).toEqual([{ event: 'message', data: 'done' }]);
  });

  it('reads a fetch body (a ReadableStream)', async () => {
    const body = new Response('event: requested\ndata: {"id":"x"}\n\n').body!;
    expect(await collect(body)).toEqual([{ event: 'requested', data: '{"id":"x"}' }]);
    // A stream without Symbol.asyncIterator (older runtimes) is read through its reader.
    const readerOnly = new Response('data: r\n\n').body!;
    expect(await collect({ getReader: () => readerOnly.getReader() } as unknown as ReadableStream<Uint8Array>)).toEqual([{ event: 'message', data: 'r' }]);
  });

  it('refuses an event longer than maxEventLength with HostError event_too_large, in one line or in many, without yielding it', async () => {
    const yielded: ServerSentEvent[] = [];
    const read = async (source: AsyncIterable<Uint8Array>) => {
      for await (const event of readServerSentEvents(source, { maxEventLength: 64 })) yielded.push(event);
    };
    const longLine = await failure(read(chunks('data: ok\n\n', `data: ${'x'.repeat(40)}`, 'x'.repeat(40))));
    expect(isHostError(longLine) && longLine.code).toBe('event_too_large');
    const manyLines = await failure(read(chunks('data: ok\n\n', ...Array.from({ length: 20 }, () => 'data: 12345\n'))));
    expect(isHostError(manyLines) && manyLines.code).toBe('event_too_large');
    expect(yielded).toEqual([{ event: 'message', data: 'ok' }, { event: 'message', data: 'ok' }]);
    // Exactly at the bound is still an event: 'data: ' + 57 characters + the line end = 64.
    expect(await collect(chunks(`data: ${'y'.repeat(57)}\n\n`), { maxEventLength: 64 })).toEqual([{ event: 'message', data: 'y'.repeat(57) }]);
  });

  it('bounds an event by default at MAX_SERVER_SENT_EVENT_LENGTH', async () => {
    const error = await failure(collect(chunks('data: ', 'x'.repeat(MAX_SERVER_SENT_EVENT_LENGTH))));
    expect(isHostError(error) && error.code).toBe('event_too_large');
  });

  it('stops with the reason when its signal aborts, and cancels a ReadableStream it stops reading', async () => {
    const controller = new AbortController();
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(stream) {
        stream.enqueue(encoder.encode('data: tick\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    const seen: string[] = [];
    const error = await failure(
      (async () => {
        for await (const event of readServerSentEvents(body, { signal: controller.signal })) {
          seen.push(event.data);
          if (seen.length === 2) controller.abort(new Error('stop'));
        }
      })(),
    );
    expect((error as Error).message).toBe('stop');
    expect(seen).toEqual(['tick', 'tick']);
    expect(cancelled).toBe(true);
  });
});
