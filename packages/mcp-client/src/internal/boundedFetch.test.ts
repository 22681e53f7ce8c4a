import type { FetchLike } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { createBoundedFetch } from './boundedFetch.js';

const encoder = new TextEncoder();

/** A base fetch answering with an event stream of `chunks`, keeping the request's signal. */
function streamingBase(chunks: string[], seen: { signal?: AbortSignal | null } = {}): FetchLike {
  return async (_url, init) => {
    seen.signal = init?.signal ?? null;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
        controller.close();
      },
    });
    return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
  };
}

const post = (body: unknown) => ({ method: 'POST', body: JSON.stringify(body) });

describe('createBoundedFetch on event streams', () => {
  it.each([
    ['\\n | \\n', '\n', '\n'],
    ['\\r\\n | \\r\\n', '\r\n', '\r\n'],
    ['\\n\\r | \\n', '\n\r', '\n'],
  ])('counts an event boundary split across reads (%s) as a boundary', async (_name, end, start) => {
    const event = `event: message\ndata: ${'x'.repeat(60)}`;
    // Each event is below the cap; all of them together are far above it.
    const chunks = Array.from({ length: 50 }, () => [`${event}${end}`, `${start}`]).flat();
    const fetch = createBoundedFetch({ maxBytes: 200, headers: {}, base: streamingBase(chunks) });
    const response = await fetch('http://127.0.0.1/mcp', post({ jsonrpc: '2.0', id: 1, method: 'tools/call' }));
    const text = await response.text();
    expect(text).not.toContain('max_response_bytes');
    expect(text.split('event: message')).toHaveLength(51);
  });

  it('still ends an event longer than the cap with an error for the request', async () => {
    const fetch = createBoundedFetch({ maxBytes: 100, headers: {}, base: streamingBase([`data: ${'x'.repeat(80)}\n`, `data: ${'y'.repeat(80)}\n\n`]) });
    const text = await (await fetch('http://127.0.0.1/mcp', post({ jsonrpc: '2.0', id: 7, method: 'tools/call' }))).text();
    expect(text).toContain('"id":7');
    expect(text).toContain('exceeded max_response_bytes (100 bytes)');
  });

  it('aborts the response body of a request once notifications/cancelled is sent for it', async () => {
    const seen: { signal?: AbortSignal | null } = {};
    const dripping: FetchLike = async (_url, init) => {
      seen.signal ??= init?.signal ?? null;
      return new Response(new ReadableStream({ start: (controller) => controller.enqueue(encoder.encode('data: {')) }), { headers: { 'content-type': 'text/event-stream' } });
    };
    const fetch = createBoundedFetch({ maxBytes: 1_000, headers: {}, base: dripping });
    const outer = new AbortController();
    await fetch('http://127.0.0.1/mcp', { ...post({ jsonrpc: '2.0', id: 'call-1', method: 'tools/call' }), signal: outer.signal });
    expect(seen.signal?.aborted).toBe(false);
    const other = createBoundedFetch({ maxBytes: 1_000, headers: {}, base: async () => new Response(null, { status: 202 }) });
    await other('http://127.0.0.1/mcp', post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'call-1' } }));
    expect(seen.signal?.aborted).toBe(false);
    await fetch('http://127.0.0.1/mcp', post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'call-1' } }));
    expect(seen.signal?.aborted).toBe(true);
  });

  it("forwards the transport's own abort to every request's body", async () => {
    const seen: { signal?: AbortSignal | null } = {};
    const fetch = createBoundedFetch({ maxBytes: 1_000, headers: {}, base: streamingBase(['data: {}\n\n'], seen) });
    const outer = new AbortController();
    await fetch('http://127.0.0.1/mcp', { ...post({ jsonrpc: '2.0', id: 3, method: 'ping' }), signal: outer.signal });
    outer.abort(new Error('closed'));
    expect(seen.signal?.aborted).toBe(true);
  });
});
