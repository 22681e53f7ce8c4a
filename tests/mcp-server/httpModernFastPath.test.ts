// The per-request (2026-07-28) fast path: well-formed tools/call and tools/list whose headers agree
// with the body are served by a long-lived modern instance; everything else by the SDK's per-request
// entry. Each test sends the same request both ways and expects the same answer.
import { describe, expect, it } from 'vitest';
import { postJson, useSuiteFixtureServer } from './helpers.js';
import { eventually } from '../support/poll.js';

const REVISION = '2026-07-28';
const envelope = (extra: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': REVISION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'fast-path-test', version: '1' },
  ...extra,
});

/** `Mcp-Name` in the header encoding the SDK decodes but the fast path leaves to it. */
const base64Name = (name: string) => `=?base64?${Buffer.from(name).toString('base64')}?=`;

const toolCall = (id: number | string, name: string, args: unknown, meta = envelope()) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, _meta: meta },
});

function headers(method: string, name?: string, accept = 'application/json'): Record<string, string> {
  return { 'mcp-protocol-version': REVISION, 'mcp-method': method, accept, ...(name === undefined ? {} : { 'mcp-name': name }) };
}

async function send(url: string, body: unknown, extra: Record<string, string>) {
  const response = await postJson(url, body, extra);
  return { status: response.status, contentType: response.headers['content-type'], body: response.body };
}

describe('2026-07-28 requests: fast path and SDK entry answer alike', () => {
  const ctx = useSuiteFixtureServer();

  it('tools/call: same result, serverInfo and resultType, either way', async () => {
    const fast = await send(ctx.url, toolCall(1, 'fixture.echo', { text: 'hi' }), headers('tools/call', 'fixture.echo'));
    const entry = await send(ctx.url, toolCall(1, 'fixture.echo', { text: 'hi' }), headers('tools/call', base64Name('fixture.echo')));
    expect(fast.status).toBe(200);
    expect(JSON.parse(fast.body)).toEqual(JSON.parse(entry.body));
    expect(JSON.parse(fast.body).result).toMatchObject({
      structuredContent: { text: 'hi' },
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'capnode' } },
    });
  });

  it('tools/list: same list and cache fields either way', async () => {
    const list = { jsonrpc: '2.0', id: 'l', method: 'tools/list', params: { _meta: envelope() } };
    const fast = await send(ctx.url, list, headers('tools/list'));
    // An Mcp-Name header on tools/list means nothing to the SDK, but takes the request off the fast path.
    const entry = await send(ctx.url, list, headers('tools/list', 'ignored'));
    expect(fast.status).toBe(200);
    expect(JSON.parse(fast.body)).toEqual(JSON.parse(entry.body));
    expect(JSON.parse(fast.body).result.tools.map((tool: { name: string }) => tool.name)).toContain('fixture.echo');
  });

  it('an envelope the SDK refuses gets the SDK entry’s own answer, and nothing runs', async () => {
    const before = ctx.fixture.probe.lastRequest;
    const bad = toolCall(2, 'fixture.echo', { text: 'no' }, envelope({ 'io.modelcontextprotocol/clientInfo': 5 }));
    const fast = await send(ctx.url, bad, headers('tools/call', 'fixture.echo'));
    const entry = await send(ctx.url, bad, headers('tools/call', base64Name('fixture.echo')));
    expect(fast.status).toBe(entry.status);
    expect(fast.status).toBeGreaterThanOrEqual(400);
    expect(JSON.parse(fast.body)).toEqual(JSON.parse(entry.body));
    expect(JSON.parse(fast.body).error.code).toBe(-32602);
    expect(ctx.fixture.probe.lastRequest).toBe(before);
    expect(ctx.server.inFlight).toBe(0);
  });

  it('an invalid log level in the envelope is refused the same way', async () => {
    const body = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'fixture.echo', arguments: { text: 'x' }, _meta: envelope({ 'io.modelcontextprotocol/logLevel': 'loud' }) } };
    const fast = await send(ctx.url, body, headers('tools/call', 'fixture.echo'));
    const entry = await send(ctx.url, body, headers('tools/call', base64Name('fixture.echo')));
    expect({ status: fast.status, body: JSON.parse(fast.body) }).toEqual({ status: entry.status, body: JSON.parse(entry.body) });
  });

  it('streams progress over SSE when the client accepts it, then the result', async () => {
    const meta = envelope({ progressToken: 'p1' });
    const fast = await send(ctx.url, toolCall(4, 'fixture.slow', { ms: 40, steps: 2 }, meta), headers('tools/call', 'fixture.slow', 'application/json, text/event-stream'));
    expect(fast.status).toBe(200);
    expect(fast.contentType).toContain('text/event-stream');
    const messages = fast.body
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)));
    expect(messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params.progress)).toEqual([1, 2]);
    expect(messages.at(-1)).toMatchObject({ id: 4, result: { content: [{ type: 'text', text: 'slept 40 ms' }] } });
  });

  it('answers with plain JSON and drops progress when the client accepts only JSON', async () => {
    const fast = await send(ctx.url, toolCall(5, 'fixture.slow', { ms: 20, steps: 2 }, envelope({ progressToken: 'p2' })), headers('tools/call', 'fixture.slow'));
    expect(fast.contentType).toContain('application/json');
    expect(JSON.parse(fast.body)).toMatchObject({ id: 5, result: { content: [{ type: 'text', text: 'slept 20 ms' }] } });
  });

  it('keeps concurrent requests with the same id apart', async () => {
    const answers = await Promise.all(
      ['a', 'b', 'c'].map((text) => send(ctx.url, toolCall(7, 'fixture.echo', { text }), headers('tools/call', 'fixture.echo'))),
    );
    expect(answers.map((answer) => JSON.parse(answer.body))).toEqual(
      ['a', 'b', 'c'].map((text) => expect.objectContaining({ id: 7, result: expect.objectContaining({ structuredContent: { text } }) })),
    );
    await eventually(() => ctx.server.inFlight === 0);
  });
});
