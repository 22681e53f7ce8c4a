import { describe, expect, it } from 'vitest';
import { lateCapability } from './fixtures/capabilities.mjs';
import { postJson, startFixtureServer, useSuiteFixtureServer } from './helpers.js';
import { eventually } from '../support/poll.js';

const call = (id: unknown, name: unknown, args?: unknown, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: args === undefined ? { name, ...extra } : { name, arguments: args, ...extra },
});

async function rpc(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await postJson(url, body, headers);
  return { status: response.status, json: response.body === '' ? undefined : JSON.parse(response.body), text: response.body, headers: response.headers };
}

describe('JSON-RPC over sessionless HTTP', () => {
  const ctx = useSuiteFixtureServer();

  it('initializes with the requested supported version, and negotiates the latest for an unknown one', async () => {
    for (const version of ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']) {
      const { json } = await rpc(ctx.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
      expect(json.result.protocolVersion).toBe(version);
      expect(json.result.serverInfo.name).toBe('capnode');
      expect(json.result.capabilities.tools).toEqual({ listChanged: false });
    }
    const { json } = await rpc(ctx.url, { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2099-01-01', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    expect(json.result.protocolVersion).toBe('2025-11-25');
  });

  it('refuses an unsupported MCP-Protocol-Version header with a clear error listing the supported versions', async () => {
    const { status, json } = await rpc(ctx.url, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { 'mcp-protocol-version': '2099-01-01' });
    expect(status).toBe(400);
    expect(json.id).toBe(3);
    expect(json.error.code).toBe(-32022);
    expect(json.error.message).toContain('2099-01-01');
    expect(json.error.data).toEqual({ supported: ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07', '2026-07-28'], requested: '2099-01-01' });
  });

  it('serves the 2026-07-28 per-request lifecycle on the same URL, and names supported versions when a claim is unsupported', async () => {
    const envelope = (version: string) => ({
      'io.modelcontextprotocol/protocolVersion': version,
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'raw-modern', version: '1' },
    });
    const modernHeaders = (method: string) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, accept: 'application/json, text/event-stream' });
    const discover = await rpc(ctx.url, { jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: envelope('2026-07-28') } }, modernHeaders('server/discover'));
    expect(discover.status).toBe(200);
    expect(discover.json.result.supportedVersions).toContain('2026-07-28');
    expect(discover.json.result.capabilities.tools).toEqual({ listChanged: true });
    const called = await rpc(
      ctx.url,
      { jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'fixture.whoami', arguments: {}, _meta: envelope('2026-07-28') } },
      { ...modernHeaders('tools/call'), 'mcp-name': 'fixture.whoami' },
    );
    expect(called.json.result.structuredContent).toEqual({ transport: 'mcp-http', caller: 'raw-modern', requestId: 'c' });
    const unsupported = await rpc(ctx.url, { jsonrpc: '2.0', id: 'u', method: 'tools/list', params: { _meta: envelope('2027-01-01') } });
    expect(unsupported.status).toBe(400);
    expect(unsupported.json.error.code).toBe(-32022);
    expect(unsupported.json.error.data).toMatchObject({ supported: ['2026-07-28'], requested: '2027-01-01' });
  });

  it('lists tools from the live registry with schemas and annotations', async () => {
    const { json } = await rpc(ctx.url, { jsonrpc: '2.0', id: 4, method: 'tools/list' });
    const echo = json.result.tools.find((tool: { name: string }) => tool.name === 'fixture.echo');
    expect(echo).toEqual({
      name: 'fixture.echo',
      title: 'Echo',
      description: 'Echoes its text argument.',
      inputSchema: expect.objectContaining({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }),
      annotations: { title: 'Echo', readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    });
    expect(echo.inputSchema).toEqual(ctx.fixture.registry.resolve('fixture.echo')?.inputSchema);
    const log = json.result.tools.find((tool: { name: string }) => tool.name === 'fixture.log');
    expect(log.inputSchema).toMatchObject({ type: 'object', additionalProperties: true });
    expect(log.annotations).toBeUndefined();
  });

  it('shows a capability registered after start on the next tools/list, and drops an unregistered one', async () => {
    const names = async () => (await rpc(ctx.url, { jsonrpc: '2.0', id: 5, method: 'tools/list' })).json.result.tools.map((tool: { name: string }) => tool.name);
    expect(await names()).not.toContain('late.hello');
    const remove = ctx.fixture.registry.register(lateCapability);
    expect(await names()).toContain('late.hello');
    expect((await rpc(ctx.url, call(6, 'late.hello', {}))).json.result.content).toEqual([{ type: 'text', text: 'hello' }]);
    remove();
    expect(await names()).not.toContain('late.hello');
  });

  it('calls a tool and returns content plus structuredContent', async () => {
    const { json } = await rpc(ctx.url, call(7, 'fixture.echo', { text: 'hi' }));
    expect(json).toEqual({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: '{\n  "text": "hi"\n}' }], structuredContent: { text: 'hi' } } });
  });

  it('matches tool names case-insensitively and records the canonical name', async () => {
    const { json } = await rpc(ctx.url, call(8, 'FIXTURE.ECHO', { text: 'x' }));
    expect(json.result.isError).toBeUndefined();
    expect(ctx.fixture.probe.lastRequest).toMatchObject({ command: 'FIXTURE.ECHO', transport: 'mcp-http', requestId: '8' });
  });

  it('returns image content', async () => {
    const { json } = await rpc(ctx.url, call(9, 'fixture.image', {}));
    expect(json.result.content[0]).toMatchObject({ type: 'image', mimeType: 'image/png' });
  });

  it('reports unknown tools, bad arguments and capability failures as tool errors, not JSON-RPC errors', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [call(10, 'no.such.tool', {}), /Unknown tool: no\.such\.tool/],
      [call(11, 'fixture.echo', { text: 5 }), /Invalid arguments for fixture\.echo/],
      [call(12, 'fixture.echo', [1, 2]), /Arguments must be a JSON object/],
      [call(13, 'fixture.echo', 'text'), /Arguments must be a JSON object/],
      [call(14, 'fixture.fail', {}), /fixture failure: this command always fails/],
      [call(15, 'fixture.deny', {}), /fixture denial: not allowed/],
      [{ jsonrpc: '2.0', id: 16, method: 'tools/call' }, /params must be an object/],
      [{ jsonrpc: '2.0', id: 17, method: 'tools/call', params: { name: 42 } }, /"name" must be a non-empty string/],
      [{ jsonrpc: '2.0', id: 18, method: 'tools/call', params: { arguments: {} } }, /"name" must be a non-empty string/],
    ];
    for (const [body, message] of cases) {
      const { status, json } = await rpc(ctx.url, body);
      expect(status).toBe(200);
      expect(json.error).toBeUndefined();
      expect(json.result.isError).toBe(true);
      expect(json.result.content[0].text).toMatch(message);
    }
  });

  it('accepts null arguments as no arguments', async () => {
    const { json } = await rpc(ctx.url, call(19, 'fixture.log', null));
    expect(json.result).toEqual({ content: [{ type: 'text', text: 'logged' }] });
  });

  it('never leaks an internal exception message', async () => {
    const { text, json } = await rpc(ctx.url, call(20, 'fixture.throw', {}));
    expect(json.result.isError).toBe(true);
    expect(json.result.content[0].text).toBe('fixture.throw failed with an internal error.');
    expect(text).not.toContain('SECRET');
  });

  it('answers unknown methods with -32601 and empty lists for resources and prompts', async () => {
    expect((await rpc(ctx.url, { jsonrpc: '2.0', id: 21, method: 'no/such' })).json.error.code).toBe(-32601);
    expect((await rpc(ctx.url, { jsonrpc: '2.0', id: 22, method: 'resources/list' })).json.result).toEqual({ resources: [] });
    expect((await rpc(ctx.url, { jsonrpc: '2.0', id: 23, method: 'resources/templates/list' })).json.result).toEqual({ resourceTemplates: [] });
    expect((await rpc(ctx.url, { jsonrpc: '2.0', id: 24, method: 'prompts/list' })).json.result).toEqual({ prompts: [] });
  });

  it('round-trips numeric, string and very large numeric ids exactly, keeping their types', async () => {
    const big = '123456789012345678901234567890';
    const bigResponse = await postJson(ctx.url, `{"jsonrpc":"2.0","id":${big},"method":"ping"}`);
    expect(bigResponse.body).toBe(`{"jsonrpc":"2.0","id":${big},"result":{}}`);
    const stringResponse = await postJson(ctx.url, '{"jsonrpc":"2.0","id":"42","method":"ping"}');
    expect(JSON.parse(stringResponse.body).id).toBe('42');
    const numberResponse = await postJson(ctx.url, '{"jsonrpc":"2.0","id":42,"method":"ping"}');
    expect(JSON.parse(numberResponse.body).id).toBe(42);
    const zero = await postJson(ctx.url, '{"jsonrpc":"2.0","id":0,"method":"ping"}');
    expect(JSON.parse(zero.body).id).toBe(0);
    const escaped = await postJson(ctx.url, '{"jsonrpc":"2.0","id":"a\\u0062c","method":"ping"}');
    expect(JSON.parse(escaped.body).id).toBe('abc');
  });

  it('serves two concurrent requests with the same id independently', async () => {
    const [slow, fast] = await Promise.all([rpc(ctx.url, call(25, 'fixture.slow', { ms: 300, steps: 1 })), rpc(ctx.url, call(25, 'fixture.echo', { text: 'fast' }))]);
    expect(slow.json.result.content[0].text).toBe('slept 300 ms');
    expect(fast.json.result.structuredContent).toEqual({ text: 'fast' });
  });

  it('answers a JSON-RPC batch with an array and ignores posted responses', async () => {
    const { json } = await rpc(ctx.url, [
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      call('b', 'fixture.echo', { text: 'batched' }),
    ]);
    expect(json).toHaveLength(2);
    const byId = Object.fromEntries(json.map((response: { id: string }) => [response.id, response]));
    expect(byId.a.result).toEqual({});
    expect(byId.b.result.structuredContent).toEqual({ text: 'batched' });
    const posted = await postJson(ctx.url, { jsonrpc: '2.0', id: 99, result: {} });
    expect(posted.status).toBe(202);
  });

  it('sets the logging level through the SDK', async () => {
    const { json } = await rpc(ctx.url, { jsonrpc: '2.0', id: 26, method: 'logging/setLevel', params: { level: 'debug' } });
    expect(json.result).toEqual({});
  });

  it('streams progress as SSE when the client accepts it and sent a progress token', async () => {
    const response = await postJson(ctx.url, call(27, 'fixture.slow', { ms: 100, steps: 2 }, { _meta: { progressToken: 'tok' } }), {
      accept: 'application/json, text/event-stream',
    });
    expect(response.headers['content-type']).toBe('text/event-stream');
    const events = response.body
      .split('\n\n')
      .filter((frame) => frame.startsWith('event: message'))
      .map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)));
    expect(events.slice(0, 2)).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 1, total: 2, message: 'step 1/2' } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 2, total: 2, message: 'step 2/2' } },
    ]);
    expect(events[2]).toEqual({ jsonrpc: '2.0', id: 27, result: { content: [{ type: 'text', text: 'slept 100 ms' }] } });
  });

  it('answers plain JSON without progress when the client accepts only JSON', async () => {
    const response = await postJson(ctx.url, call(28, 'fixture.slow', { ms: 50, steps: 2 }, { _meta: { progressToken: 'tok' } }), { accept: 'application/json' });
    expect(response.headers['content-type']).toBe('application/json');
    expect(JSON.parse(response.body).result.content[0].text).toBe('slept 50 ms');
  });

  it('sends log lines over SSE to a streaming client', async () => {
    const response = await postJson(ctx.url, call(29, 'fixture.log', {}), { accept: 'application/json, text/event-stream' });
    expect(response.body).toContain('"method":"notifications/message"');
    expect(response.body).toContain('first log line');
  });
});

describe('sessionless cancellation', () => {
  it('cancels a running call by its JSON-RPC id; the call completes with a "cancelled" tool error', async () => {
    await using ctx = await startFixtureServer();
    const { server, fixture } = ctx;
    const pending = rpc(server.url, call(77, 'fixture.slow', { ms: 20_000, steps: 2 }));
    await eventually(() => fixture.probe.started === 1);
    const cancel = await rpc(server.url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77, reason: 'user' } });
    expect(cancel.status).toBe(202);
    const { json } = await pending;
    expect(json.id).toBe(77);
    expect(json.result.isError).toBe(true);
    expect(json.result.content[0].text).toContain('cancelled');
    await eventually(() => fixture.probe.aborted === 1);
  });

  it('honours a cancellation that arrives before its call (tombstone) without starting the command', async () => {
    await using ctx = await startFixtureServer();
    const { server, fixture } = ctx;
    await rpc(server.url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'early' } });
    const { json } = await rpc(server.url, call('early', 'fixture.slow', { ms: 20_000 }));
    expect(json.result.isError).toBe(true);
    expect(json.result.content[0].text).toContain('cancelled');
    expect(fixture.probe.started).toBe(0);
    const again = await rpc(server.url, call('early', 'fixture.slow', { ms: 10, steps: 1 }));
    expect(again.json.result.isError).toBeUndefined();
  });

  it('matches a very large numeric id exactly, not by its rounded double', async () => {
    await using ctx = await startFixtureServer();
    const { server, fixture } = ctx;
    const id = '123456789012345678901234567890';
    const neighbour = '123456789012345678901234567891';
    const pending = postJson(server.url, `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"fixture.slow","arguments":{"ms":20000}}}`);
    await eventually(() => fixture.probe.started === 1);
    await postJson(server.url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${neighbour}}}`);
    await postJson(server.url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"${id}"}}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fixture.probe.aborted).toBe(0);
    await postJson(server.url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id}}}`);
    const response = await pending;
    expect(response.body.startsWith(`{"jsonrpc":"2.0","id":${id},`)).toBe(true);
    expect(JSON.parse(response.body).result.content[0].text).toContain('cancelled');
  });

  it('touches neither call when two active calls share the id', async () => {
    await using ctx = await startFixtureServer();
    const { server, fixture } = ctx;
    const first = rpc(server.url, call(5, 'fixture.slow', { ms: 600, steps: 1 }));
    const second = rpc(server.url, call(5, 'fixture.slow', { ms: 600, steps: 1 }));
    await eventually(() => fixture.probe.started === 2);
    await rpc(server.url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } });
    const results = await Promise.all([first, second]);
    for (const { json } of results) expect(json.result.content[0].text).toBe('slept 600 ms');
    expect(fixture.probe.aborted).toBe(0);
  });

  it('ignores a late cancellation for an id that just completed, so the id can be reused at once', async () => {
    await using ctx = await startFixtureServer();
    const { server } = ctx;
    await rpc(server.url, call(6, 'fixture.echo', { text: 'one' }));
    await rpc(server.url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 6 } });
    const { json } = await rpc(server.url, call(6, 'fixture.slow', { ms: 10, steps: 1 }));
    expect(json.result.isError).toBeUndefined();
  });

  it('aborts the capability when the client disconnects mid-call', async () => {
    await using ctx = await startFixtureServer();
    const { server, fixture } = ctx;
    const controller = new AbortController();
    const pending = fetch(server.url, {
      method: 'POST',
      headers: { authorization: 'Bearer test-token-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify(call(1, 'fixture.slow', { ms: 20_000 })),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await eventually(() => fixture.probe.started === 1);
    controller.abort();
    await pending;
    await eventually(() => fixture.probe.aborted === 1);
    await eventually(() => server.inFlight === 0);
  });
});
