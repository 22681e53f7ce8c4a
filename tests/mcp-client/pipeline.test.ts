import { createInvoker, createRegistry, defineCapability, defineCommand, type InvocationOutcome } from '@capnode/capabilities';
import { createMcpToolsSlot, isMcpClientError } from '@capnode/mcp-client';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { expect, test } from 'vitest';
import { fixtureServer, grantAll, memoryLogger, textOf } from './helpers.js';

test("imported tools register into the host's registry and run through its pipeline (audit sees them)", async () => {
  const audit: { command: string | undefined; ok: boolean }[] = [];
  const registry = createRegistry([
    defineCapability({ category: 'clock', commands: [defineCommand({ name: 'clock.now', description: 'now', execute: () => 'tick' })] }),
  ]);
  const invoker = createInvoker({
    registry,
    hooks: [createMcpToolsSlot(), { afterInvoke: (_invocation, request, outcome: InvocationOutcome) => void audit.push({ command: outcome.command ?? request.command, ok: outcome.result.ok }) }],
  });
  const versionBefore = registry.version;
  const runtime = await createMcpRuntime(grantAll([fixtureServer('fx')]), { agent: 'test', invoker });
  expect(runtime.invoker).toBe(invoker);
  expect(registry.version).toBeGreaterThan(versionBefore);

  const echo = registry.resolve('FX__ECHO');
  expect(echo).toMatchObject({ name: 'fx__echo', category: 'mcp' });
  expect(echo!.inputSchema).toEqual({ type: 'object', properties: { text: { type: 'string' } } });
  expect(echo!.definition.localOnly).toBe(true);

  const direct = await invoker.invoke({ command: 'fx__echo', args: { text: 'via host' }, transport: 'mcp-http' });
  expect(direct.result).toEqual({ ok: true, content: [{ type: 'text', text: 'via host' }] });
  expect(textOf(await runtime.call('fx__echo', { text: 'via runtime' }))).toBe('via runtime');
  expect((await invoker.invoke({ command: 'clock.now', transport: 'internal' })).result.ok).toBe(true);
  expect(audit).toEqual([
    { command: 'fx__echo', ok: true },
    { command: 'fx__echo', ok: true },
    { command: 'clock.now', ok: true },
  ]);

  await runtime.close();
  expect(registry.resolve('fx__echo')).toBeUndefined();
  expect(registry.resolve('clock.now')).toBeDefined();
  expect((await invoker.invoke({ command: 'clock.now', transport: 'internal' })).result.ok).toBe(true);
});

test("the runtime fills the pipeline's declared mcp-tools slot: its refusals reach the audit after it; no slot, no runtime", async () => {
  const audit: string[] = [];
  const invoker = createInvoker({
    registry: createRegistry(),
    hooks: [createMcpToolsSlot(), { name: 'audit', afterInvoke: (_invocation, request, outcome) => void audit.push(`${request.command}:${outcome.result.ok ? 'ok' : outcome.result.error.code}`) }],
  });
  expect(invoker.hooks.map((hook) => hook.name)).toEqual(['mcp-tools', 'audit']);
  {
    await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx')], { autonomy: 'supervised', auto_approve: ['fx__echo'] }), { agent: 'test', invoker, logger: memoryLogger() });
    expect((await invoker.invoke({ command: 'fx__echo', args: { text: 'x' }, transport: 'internal' })).result.ok).toBe(true);
    expect(textOf(await runtime.call('fx__env', { name: 'HOME' }))).toMatch(/needs approval and no approver/);
  }
  // Closed, the runtime leaves the slot empty again: nothing of its policy stays in the pipeline.
  expect(invoker.hooks.map((hook) => hook.name)).toEqual(['mcp-tools', 'audit']);
  expect(audit).toEqual(['fx__echo:ok', 'fx__env:denied']);

  const bare = createInvoker({ registry: createRegistry() });
  const refused = await createMcpRuntime(grantAll([fixtureServer('fx')]), { agent: 'test', invoker: bare, logger: memoryLogger() }).catch((error: unknown) => error);
  expect(isMcpClientError(refused) && refused.code).toBe('invalid_config');
  expect((refused as Error).message).toMatch(/no 'mcp-tools' slot/);
});

test('a listChanged re-list updates the host registry', async () => {
  const invoker = createInvoker({ registry: createRegistry(), hooks: [createMcpToolsSlot()] });
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx')]), { agent: 'test', invoker });
  const changes: string[][] = [];
  invoker.registry.subscribe((change) => changes.push(change.added.filter((name) => name === 'fx__added')));
  await runtime.call('fx__change');
  const deadline = Date.now() + 10_000;
  while (!invoker.registry.resolve('fx__added') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  expect(invoker.registry.resolve('fx__added')).toBeDefined();
  expect(changes.flat()).toContain('fx__added');
});

test('supervised calls need approval: refused without an approver, asked otherwise; always_ask wins', async () => {
  const profile = { autonomy: 'supervised', auto_approve: ['fx__echo', 'fx__list-*'], always_ask: ['fx__list-count'] };
  const refused = await createMcpRuntime(grantAll([fixtureServer('fx')], profile), { agent: 'test', logger: memoryLogger() });
  expect(textOf(await refused.call('fx__echo', { text: 'auto' }))).toBe('auto');
  const denied = await refused.call('fx__env', { name: 'HOME' });
  expect(denied.isError).toBe(true);
  expect(textOf(denied)).toMatch(/needs approval and no approver is configured/);
  await refused.close();

  const asked: { name: string; server: string; tool: string; args: unknown }[] = [];
  await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx')], profile), {
    agent: 'test',
    approve: ({ name, server, tool, args }) => {
      asked.push({ name, server, tool, args });
      return name !== 'fx__env';
    },
  });
  expect((await runtime.call('fx__env', { name: 'HOME' })).isError).toBe(true);
  expect(textOf(await runtime.call('fx__list-count'))).toMatch(/^\d+$/);
  expect(textOf(await runtime.call('fx__echo', { text: 'no question' }))).toBe('no question');
  expect(asked).toEqual([
    { name: 'fx__env', server: 'fx', tool: 'env', args: { name: 'HOME' } },
    { name: 'fx__list-count', server: 'fx', tool: 'list-count', args: {} },
  ]);
});

test('authorization hides and refuses tools: excluded_tools, allowed_tools auto-admission, per-run allow-list, deny_all', async () => {
  const servers = [fixtureServer('fx')];
  {
    await using runtime = await createMcpRuntime(grantAll(servers, { autonomy: 'full', allowed_tools: ['builtin_only'], excluded_tools: ['fx__crash', 'fx__h*'] }), { agent: 'test' });
    const names = Object.keys(await runtime.tools());
    expect(names).toContain('fx__echo');
    expect(names).not.toContain('fx__crash');
    expect(names).not.toContain('fx__hang');
    expect(textOf(await runtime.call('fx__crash'))).toMatch(/Unknown tool/);
  }
  {
    await using runtime = await createMcpRuntime(grantAll(servers, { autonomy: 'full' }), { agent: 'test', runAllowList: ['fx__echo'] });
    expect(Object.keys(await runtime.tools())).toEqual(['fx__echo']);
  }
  {
    await using runtime = await createMcpRuntime(grantAll(servers, { deny_all_tools: true }), { agent: 'test' });
    expect(await runtime.tools()).toEqual({});
    expect(runtime.diagnostics()[0]!.state).toBe('connected');
  }
});

test('grants: an agent without bundles connects nothing; unknown names come back as warnings', async () => {
  const { parseMcpConfig } = await import('@capnode/mcp-client');
  const { config } = parseMcpConfig({
    servers: [fixtureServer('fx'), fixtureServer('other')],
    bundles: { one: { servers: ['fx', 'ghost'] } },
    agents: { granted: { mcp_bundles: ['one', 'nope'] }, bare: {} },
    risk_profiles: { granted: { autonomy: 'full' } },
  });
  await using bare = await createMcpRuntime(config, { agent: 'bare' });
  expect(bare.diagnostics()).toEqual([]);
  await using granted = await createMcpRuntime(config, { agent: 'granted' });
  expect(granted.diagnostics().map((d) => d.server)).toEqual(['fx']);
  expect(granted.warnings).toEqual(["bundle 'one' names unknown server 'ghost'; it grants nothing", "agent 'granted' names unknown bundle 'nope'; it grants nothing"]);
  await using all = await createMcpRuntime(config, { allServers: true });
  expect(all.diagnostics().map((d) => d.server)).toEqual(['fx', 'other']);
});
