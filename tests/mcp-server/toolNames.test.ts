// Tool names for every harness: a connection selects `underscore` (`.` → `_`) with `?toolNames=` or
// the `Capnode-Tool-Names` header, on every HTTP path (initialize-era sessionless, 2026-07-28 fast
// path and SDK entry, Streamable HTTP sessions); calls accept both spellings on any connection.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { TOKEN, postJson, useSuiteFixtureServer } from './helpers.js';

const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const REVISION = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': REVISION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'tool-names-test', version: '1' },
};
const modernHeaders = (method: string, name?: string) => ({ 'mcp-protocol-version': REVISION, 'mcp-method': method, ...(name === undefined ? {} : { 'mcp-name': name }) });

function namesOf(body: string): string[] {
  return (JSON.parse(body) as { result: { tools: { name: string }[] } }).result.tools.map((tool) => tool.name);
}

async function sdkClient(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'tool-names-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}`, ...headers } } }));
  return client;
}

describe('tool names per connection over HTTP', () => {
  const ctx = useSuiteFixtureServer();

  it('initialize-era sessionless tools/list: dotted by default, underscore with the query or the header', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const dotted = namesOf((await postJson(ctx.url, list)).body);
    expect(dotted).toContain('fixture.echo');
    const byQuery = namesOf((await postJson(ctx.url, list, {}, '/?toolNames=underscore')).body);
    const byHeader = namesOf((await postJson(ctx.url, list, { 'capnode-tool-names': 'underscore' })).body);
    expect(byQuery).toEqual(dotted.map((name) => name.replaceAll('.', '_')));
    expect(byHeader).toEqual(byQuery);
    for (const name of byQuery) expect(name).toMatch(OPENAI_NAME);
  });

  it('2026-07-28 tools/list on the fast path and the SDK entry alike', async () => {
    const list = { jsonrpc: '2.0', id: 'l', method: 'tools/list', params: { _meta: envelope } };
    const fast = await postJson(ctx.url, list, modernHeaders('tools/list'), '/?toolNames=underscore');
    const entry = await postJson(ctx.url, list, modernHeaders('tools/list', 'ignored'), '/?toolNames=underscore');
    expect(fast.status).toBe(200);
    expect(namesOf(fast.body)).toContain('fixture_echo');
    expect(namesOf(entry.body)).toEqual(namesOf(fast.body));
    for (const name of namesOf(fast.body)) expect(name).toMatch(OPENAI_NAME);
    const plain = await postJson(ctx.url, list, modernHeaders('tools/list'));
    expect(namesOf(plain.body)).toContain('fixture.echo');
  });

  it('tools/call takes both spellings on every path, the direct fast path included, with the same result', async () => {
    const call = (name: string) => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: { text: 'hi' }, _meta: envelope } });
    const dotted = JSON.parse((await postJson(ctx.url, call('fixture.echo'), modernHeaders('tools/call', 'fixture.echo'))).body);
    const underscore = JSON.parse((await postJson(ctx.url, call('fixture_echo'), modernHeaders('tools/call', 'fixture_echo'))).body);
    expect(dotted.result.structuredContent).toEqual({ text: 'hi' });
    expect(underscore).toEqual(dotted);
    // The initialize era, on a connection that selected nothing.
    const legacy = { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'fixture_echo', arguments: { text: 'hi' } } };
    expect(JSON.parse((await postJson(ctx.url, legacy)).body).result.structuredContent).toEqual({ text: 'hi' });
  });

  it('a Streamable HTTP session keeps what its initialize selected (real SDK v2 client)', async () => {
    const underscore = await sdkClient(`${ctx.url}?toolNames=underscore`);
    const byHeader = await sdkClient(ctx.url, { 'Capnode-Tool-Names': 'underscore' });
    const dotted = await sdkClient(ctx.url);
    try {
      const names = (await underscore.listTools()).tools.map((tool) => tool.name);
      expect(names).toContain('fixture_echo');
      for (const name of names) expect(name).toMatch(OPENAI_NAME);
      expect((await byHeader.listTools()).tools.map((tool) => tool.name)).toEqual(names);
      expect((await dotted.listTools()).tools.map((tool) => tool.name)).toContain('fixture.echo');
      const viaUnderscore = await underscore.callTool({ name: 'fixture_echo', arguments: { text: 'x' } });
      const viaDotted = await underscore.callTool({ name: 'fixture.echo', arguments: { text: 'x' } });
      expect(viaUnderscore).toEqual(viaDotted);
    } finally {
      await Promise.all([underscore.close(), byHeader.close(), dotted.close()]);
    }
  });

  it('another value is a 400 that names the accepted ones', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const byQuery = await postJson(ctx.url, list, {}, '/?toolNames=snake');
    expect(byQuery.status).toBe(400);
    expect(byQuery.body).toContain("?toolNames= must be 'dotted' or 'underscore', got \\\"snake\\\"");
    const byHeader = await postJson(ctx.url, list, { 'capnode-tool-names': 'camel' });
    expect(byHeader.status).toBe(400);
    expect(byHeader.body).toContain('Capnode-Tool-Names header');
  });
});

describe('the server default', () => {
  const ctx = useSuiteFixtureServer({ toolNames: 'underscore' });

  it('toolNames: underscore lists underscore names unless a request selects dotted', async () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    expect(namesOf((await postJson(ctx.url, list)).body)).toContain('fixture_echo');
    expect(namesOf((await postJson(ctx.url, list, {}, '/?toolNames=dotted')).body)).toContain('fixture.echo');
  });
});
