import { HostError } from '../errors.js';

/** One server-sent event: its type (`message` when the stream names none) and its data lines joined by `\n`. */
export interface ServerSentEvent {
  readonly event: string;
  readonly data: string;
}

/** Limits of {@link readServerSentEvents}. */
export interface ReadServerSentEventsOptions {
  /** Longest event (its lines, in UTF-16 code units, as held in memory) read before the stream is refused; default {@link MAX_SERVER_SENT_EVENT_LENGTH}. */
  readonly maxEventLength?: number;
  /** Stops reading: the generator throws the signal's reason before its next event. */
  readonly signal?: AbortSignal;
}

/**
 * Default bound on one event (8 Mi code units): the host's approval `snapshot` (at most 64 pending
 * approvals) fits many times over, while a stream that never ends its event cannot fill the memory.
 */
export const MAX_SERVER_SENT_EVENT_LENGTH = 8 * 1024 * 1024;

async function* chunksOf(body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  if (Symbol.asyncIterator in body) {
    yield* body as AsyncIterable<Uint8Array>;
    return;
  }
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/**
 * Reads a `text/event-stream` body (a fetch body, a Node response or any async iterable of bytes)
 * into events, per the HTML event-stream format: lines end in LF, CRLF or CR (also split across
 * chunks); `event:` names the type, `data:` lines are joined; comments, `id:`, `retry:` and unknown
 * fields are ignored, an event without data is not dispatched, and an unfinished event at the end is
 * dropped. Only complete events are yielded, so a dropped connection never yields a partial one.
 * @throws HostError `event_too_large` when one event grows past `maxEventLength` (nothing of it is yielded).
 */
export async function* readServerSentEvents(body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>, options: ReadServerSentEventsOptions = {}): AsyncGenerator<ServerSentEvent> {
  const maxLength = options.maxEventLength ?? MAX_SERVER_SENT_EVENT_LENGTH;
  const decoder = new TextDecoder();
  let partial = '';
  let skipLf = false;
  let event = '';
  let data: string[] = [];
  let held = 0;
  const tooLarge = () => new HostError('event_too_large', `a server-sent event exceeded ${maxLength} characters; the stream was closed`);

  /** Applies one complete line; returns the event a blank line completes. */
  const line = (text: string): ServerSentEvent | undefined => {
    if (text === '') {
      const done = data.length > 0 ? { event: event || 'message', data: data.join('\n') } : undefined;
      event = '';
      data = [];
      held = 0;
      return done;
    }
    held += text.length + 1;
    if (held > maxLength) throw tooLarge();
    if (text.startsWith(':')) return undefined;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    const value = colon < 0 ? '' : text.slice(text.charCodeAt(colon + 1) === 0x20 ? colon + 2 : colon + 1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    return undefined;
  };

  for await (const chunk of chunksOf(body)) {
    options.signal?.throwIfAborted();
    let text = decoder.decode(chunk, { stream: true });
    if (skipLf && text.length > 0) {
      // The CR that ended the last chunk's line was half of a CRLF.
      if (text.startsWith('\n')) text = text.slice(1);
      skipLf = false;
    }
    let start = 0;
    for (let index = 0; index < text.length; index += 1) {
      const code = text.charCodeAt(index);
      if (code !== 0x0a && code !== 0x0d) continue;
      const done = line(partial + text.slice(start, index));
      partial = '';
      if (code === 0x0d) {
        if (index + 1 < text.length) {
          if (text.charCodeAt(index + 1) === 0x0a) index += 1;
        } else {
          skipLf = true;
        }
      }
      start = index + 1;
      if (done) {
        yield done;
        options.signal?.throwIfAborted();
      }
    }
    partial += text.slice(start);
    if (held + partial.length > maxLength) throw tooLarge();
  }
}
