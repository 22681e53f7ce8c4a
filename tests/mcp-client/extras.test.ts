import { parseMcpConfig } from '@capnode/mcp-client';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { expect, test } from 'vitest';
import { fixtureServer, grantAll, memoryLogger, realServer, textOf } from './helpers.js';

const everything = { name: 'everything', command: process.execPath, args: [realServer('server-everything'), 'stdio'] };

test('mcp_resources and mcp_prompts: prefixed by server, provenance-wrapped, clear "does not support" errors', async () => {
  await using runtime = await createMcpRuntime(grantAll([everything, fixtureServer('fx')]), { agent: 'test', logger: memoryLogger() });
  const tools = await runtime.tools();
  expect(tools.mcp_resources).toMatchObject({ server: '*' });
  expect(tools.mcp_prompts).toBeDefined();

  const listed = await tools.mcp_resources!.execute({ action: 'list' });
  expect(listed.isError).toBe(false);
  const resources = (listed.structuredContent as { resources: { uri: string }[] }).resources;
  expect(resources.length).toBeGreaterThan(0);
  expect(resources.every((r) => r.uri.startsWith('everything__'))).toBe(true);
  const textResource = resources.find((r) => r.uri.includes('static/document'))!;

  const read = await tools.mcp_resources!.execute({ action: 'read', uri: textResource.uri });
  expect(read.isError).toBe(false);
  expect(textOf(read)).toMatch(/^<mcp-untrusted-content server="everything" kind="resource" id="demo:\/\/[^"]+" trust="untrusted-external">\n[\s\S]+\n<\/mcp-untrusted-content>/);

  const unsupported = await tools.mcp_resources!.execute({ action: 'list', server: 'fx' });
  expect(unsupported.isError).toBe(true);
  expect(textOf(unsupported)).toBe("MCP server 'fx' does not support resources.");
  expect(textOf(await tools.mcp_prompts!.execute({ action: 'get', name: 'fx__anything' }))).toBe("MCP server 'fx' does not support prompts.");
  expect(textOf(await tools.mcp_resources!.execute({ action: 'read', uri: 'no-prefix' }))).toMatch(/must be prefixed by its server/);

  const prompts = await tools.mcp_prompts!.execute({ action: 'list' });
  const names = (prompts.structuredContent as { prompts: { name: string; arguments: { required: boolean }[] }[] }).prompts;
  const simple = names.find((p) => p.arguments.every((a) => !a.required))!;
  expect(simple.name.startsWith('everything__')).toBe(true);
  const rendered = await tools.mcp_prompts!.execute({ action: 'get', name: simple.name });
  expect(rendered.isError).toBe(false);
  expect(textOf(rendered)).toMatch(/^<mcp-untrusted-content server="everything" kind="prompt"[\s\S]*\[user\]/);
});

test('pinned_resources are read once at start and labelled untrusted; unreadable ones become warnings', async () => {
  const probe = await createMcpRuntime(grantAll([everything]), { agent: 'test', logger: memoryLogger() });
  const listed = await probe.call('mcp_resources', { action: 'list' });
  const uri = (listed.structuredContent as { resources: { uri: string }[] }).resources.find((r) => r.uri.includes('static/document'))!.uri.slice('everything__'.length);
  await probe.close();

  const config = grantAll([{ ...everything, pinned_resources: [uri, 'demo://does/not/exist'] }, fixtureServer('fx', 'ok', { pinned_resources: ['x://y'] })]);
  await using runtime = await createMcpRuntime(config, { agent: 'test', logger: memoryLogger() });
  const pinned = runtime.pinnedResources();
  expect(pinned).toHaveLength(1);
  expect(pinned[0]).toMatchObject({ server: 'everything', uri });
  expect(pinned[0]!.text).toContain('trust="untrusted-external"');
  expect(pinned[0]!.text).toContain('kind="pinned-resource"');
  const [everythingDiag, fxDiag] = runtime.diagnostics();
  expect(everythingDiag!.warnings.join('\n')).toMatch(/pinned resource 'demo:\/\/does\/not\/exist' could not be read/);
  expect(fxDiag!.warnings).toContain('pinned_resources ignored: the server does not support resources');
});

test('deferred loading exposes names plus tool_search; found tools become callable', async () => {
  const { config } = parseMcpConfig({
    deferred_loading: true,
    servers: [fixtureServer('fx')],
    bundles: { all: { servers: ['fx'] } },
    agents: { test: { mcp_bundles: ['all'] } },
    risk_profiles: { test: { autonomy: 'supervised', auto_approve: ['fx__echo'] } },
  });
  await using runtime = await createMcpRuntime(config, { agent: 'test' });
  expect(runtime.deferred).toBe(true);
  expect(Object.keys(await runtime.tools())).toEqual(['tool_search']);
  expect(runtime.toolNames()).toContain('fx__echo');

  const search = (await runtime.tools()).tool_search!;
  const found = await search.execute({ query: 'echoes text' });
  expect(found.isError).toBe(false);
  const tools = (found.structuredContent as { tools: { name: string; inputSchema: unknown }[] }).tools;
  expect(tools[0]).toEqual({ name: 'fx__echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, description: 'Echoes text.' });
  expect(Object.keys(await runtime.tools()).sort()).toEqual(['fx__echo', 'tool_search']);
  expect(textOf(await (await runtime.tools()).fx__echo!.execute({ text: 'found me' }))).toBe('found me');

  const selected = await search.execute({ query: 'select:fx__slow,fx__nope' });
  expect((selected.structuredContent as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['fx__slow']);
  expect(textOf(await search.execute({ query: 'zzzz' }))).toMatch(/No imported tool matches/);
});
