import { mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { createInvoker, createRegistry } from '@capnode/capabilities';
import { CONTENT_LIMITS, createMcpToolsSlot } from '@capnode/mcp-client';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { afterAll, describe, expect, test } from 'vitest';
import { activeHandles, CONTENT_SECRET as SECRET, contentServer, expectNoHandlesLeft, fixtureServer, grantAll, memoryLogger, textOf } from './helpers.js';
import { tempDir } from '../support/testHost.js';
import { connectHostClient } from './hostClient.js';

const baseline = activeHandles();

// Every runtime of this file is closed: nothing of it may keep the process alive.
afterAll(() => expectNoHandlesLeft(baseline));

describe('content from a misbehaving server is bounded, never a later exception', () => {
  test('5,000-deep and 2 MiB schemas become {type:"object"} with a note; deep annotations are dropped', async () => {
    await using runtime = await createMcpRuntime(grantAll([contentServer()]), { agent: 'test', logger: memoryLogger() });
    const tools = await runtime.tools();
    expect(() => JSON.stringify(tools)).not.toThrow();
    expect(tools['cx__fine']!.inputSchema).toEqual({ type: 'object', properties: { text: { type: 'string' } } });
    for (const [name, reason] of [['cx__deep-schema', 'nested deeper than 32 levels'], ['cx__huge-schema', 'larger than 256 KiB']] as const) {
      expect(tools[name]!.inputSchema).toEqual({ type: 'object' });
      expect(tools[name]!.description).toContain(`[capnode: inputSchema replaced by {"type":"object"}: the server's schema is ${reason}]`);
    }
    expect(tools['cx__deep-annotations']!.annotations).toBeUndefined();
    expect(runtime.diagnostics()[0]!.warnings).toEqual([
      `tool 'deep-schema': inputSchema replaced by {"type":"object"} (over the content limits)`,
      `tool 'huge-schema': inputSchema replaced by {"type":"object"} (over the content limits)`,
      "tool 'deep-annotations': annotations dropped (nested deeper than 4 levels)",
    ]);
    expect(JSON.stringify(tools).length).toBeLessThan(20_000);
  });

  test('deep structuredContent, _meta and annotations, huge fields and 2 MiB of text are degraded with markers', async () => {
    await using runtime = await createMcpRuntime(grantAll([contentServer()]), { agent: 'test', logger: memoryLogger() });
    const deep = await runtime.call('cx__deep-result');
    expect(() => JSON.stringify(deep)).not.toThrow();
    expect(deep.isError).toBe(false);
    expect(deep.structuredContent).toBeUndefined();
    expect(deep.content).toEqual([
      { type: 'text', text: 'deep', _meta: { 'capnode/dropped': 'removed by capnode: annotations nested deeper than 8 levels; _meta nested deeper than 16 levels' } },
      { type: 'text', text: '[capnode: content item omitted: its fields are larger than 16 KiB]' },
      { type: 'text', text: '[capnode: structuredContent omitted: nested deeper than 32 levels]' },
    ]);
    const huge = textOf(await runtime.call('cx__huge-text'));
    expect(huge).toBe(`${'y'.repeat(CONTENT_LIMITS.toolText)}\n[capnode: truncated ${2 * 1024 * 1024 - CONTENT_LIMITS.toolText} more characters]`);
    expect((await runtime.call('cx__fine')).structuredContent).toEqual({ ok: true });
  });

  test('the host re-exports the bounded tools and results to its own clients (SDK v2 client over HTTP)', async () => {
    const invoker = createInvoker({ registry: createRegistry(), hooks: [createMcpToolsSlot()] });
    await using imported = await createMcpRuntime(grantAll([contentServer()]), { agent: 'test', invoker, logger: memoryLogger() });
    expect(imported.diagnostics()[0]!.state).toBe('connected');
    await using client = await connectHostClient(invoker, 'content-test');
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('cx__deep-schema')!.inputSchema).toEqual({ type: 'object' });
    expect(byName.get('cx__huge-schema')!.inputSchema).toEqual({ type: 'object' });
    const claims = byName.get('cx__claims')!;
    expect(claims.annotations).toEqual({ title: 'cx: Harmless reader' });
    expect(claims.description).toContain("[capnode: hints declared by server 'cx', not verified: readOnlyHint=true, destructiveHint=false, idempotentHint=true, openWorldHint=false]");
    const result = await client.callTool({ name: 'cx__deep-result', arguments: {} });
    expect(result.structuredContent).toBeUndefined();
    expect(JSON.stringify(result.content)).toContain('[capnode: structuredContent omitted: nested deeper than 32 levels]');
  });
});

describe('resource and prompt content is scrubbed before it is cut', () => {
  test('a secret straddling the 32,000-character cut leaves no part of itself behind', async () => {
    await using runtime = await createMcpRuntime(grantAll([contentServer()]), { agent: 'test', logger: memoryLogger() });
    const prefix = SECRET.slice(0, 5);
    const read = textOf(await runtime.call('mcp_resources', { action: 'read', uri: 'cx__mem://straddle' }));
    expect(read).toContain('trust="untrusted-external"');
    expect(read).toContain('[capnode: truncated');
    expect(read).not.toContain(prefix);
    const prompt = textOf(await runtime.call('mcp_prompts', { action: 'get', name: 'cx__leaky' }));
    expect(prompt).toContain('[capnode: truncated');
    expect(prompt).toContain(`description: ${'d'.repeat(995)}`);
    expect(prompt).not.toContain(prefix);
    const listed = textOf(await runtime.call('mcp_resources', { action: 'list' })) + textOf(await runtime.call('mcp_prompts', { action: 'list' }));
    expect(listed).toContain('leaks [redacted]');
    expect(listed).not.toContain(prefix);
  });

  test('pinned resources are scrubbed the same way', async () => {
    await using runtime = await createMcpRuntime(grantAll([contentServer('cx', { pinned_resources: ['mem://straddle'] })]), { agent: 'test', logger: memoryLogger() });
    const [pinned] = runtime.pinnedResources();
    expect(pinned!.text).toContain('[capnode: truncated');
    expect(pinned!.text).not.toContain(SECRET.slice(0, 5));
  });
});

describe("a server's safety claims are not trusted", () => {
  test('readOnlyHint never relaxes the risk profile; the hints are republished as the server claim', async () => {
    await using runtime = await createMcpRuntime(grantAll([contentServer()], { autonomy: 'supervised' }), { agent: 'test', logger: memoryLogger() });
    const tool = (await runtime.tools())['cx__claims']!;
    expect(tool.annotations).toEqual({ title: 'cx: Harmless reader' });
    expect(tool.serverClaims).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    const refused = await runtime.call('cx__claims');
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/needs approval/);
    const registered = runtime.invoker.registry.commands().find((command) => command.name === 'cx__claims')!;
    expect(registered.definition.annotations).toEqual({ title: 'cx: Harmless reader' });
  });

  test('a server the user marked trusted keeps its hints', async () => {
    await using runtime = await createMcpRuntime(grantAll([contentServer('cx', { trusted: true })]), { agent: 'test', logger: memoryLogger() });
    const tool = (await runtime.tools())['cx__claims']!;
    expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(tool.serverClaims).toBeUndefined();
    expect(runtime.invoker.registry.commands().find((command) => command.name === 'cx__claims')!.definition.annotations).toEqual({
      title: 'Harmless reader',
      readOnly: true,
      destructive: false,
      idempotent: true,
      openWorld: false,
    });
  });
});

test('a symlinked uploads/ is refused: the image degrades to a marker and nothing is written through the link', async () => {
  using workspace = tempDir();
  using elsewhere = tempDir();
  mkdirSync(workspace.path, { recursive: true });
  symlinkSync(elsewhere.path, join(workspace.path, 'uploads'));
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx')]), { agent: 'test', workspace: workspace.path, logger: memoryLogger() });
  const result = await runtime.call('fx__binary', { case: 'png' });
  expect(result.attachments).toEqual([]);
  expect(textOf(result)).toMatch(/^here\n\[attachment unavailable: the image could not be saved: .*uploads is a symbolic link; refusing to write uploads through it\]$/);
  const pdf = await runtime.call('fx__binary', { case: 'pdf' });
  expect(textOf(pdf)).toMatch(/^\[attachment unavailable: the document could not be saved \(file:\/\/\/report\.pdf\): .*symbolic link/);
  expect(readdirSync(elsewhere.path)).toEqual([]);
});
