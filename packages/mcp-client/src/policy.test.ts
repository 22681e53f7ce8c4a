import { createInvoker, createRegistry, defineCapability, defineCommand } from '@capnode/capabilities';
import { describe, expect, test } from 'vitest';
import { normalizeRiskProfile } from './config.js';
import { createPolicyHook, createToolPolicy } from './policy.js';

describe('createToolPolicy authorization', () => {
  test('an empty allowed_tools is unrestricted', () => {
    const policy = createToolPolicy(normalizeRiskProfile());
    expect(policy.isAuthorized('fs__read_file')).toBe(true);
    expect(policy.isAuthorized('file_read')).toBe(true);
  });

  test('a non-empty allowed_tools auto-admits <server>__<tool> names; excluded_tools always subtracts', () => {
    const policy = createToolPolicy(normalizeRiskProfile({ allowedTools: ['file_read'], excludedTools: ['filesystem__write_file'] }));
    expect(policy.isAuthorized('file_read')).toBe(true);
    expect(policy.isAuthorized('shell')).toBe(false);
    expect(policy.isAuthorized('filesystem__read_file')).toBe(true);
    expect(policy.isAuthorized('filesystem__write_file')).toBe(false);
    expect(policy.isAuthorized('FILESYSTEM__WRITE_FILE')).toBe(false);
  });

  test('deny_all_tools denies MCP tools too; read_only autonomy refuses them', () => {
    expect(createToolPolicy(normalizeRiskProfile({ denyAllTools: true })).isAuthorized('fs__read')).toBe(false);
    expect(createToolPolicy(normalizeRiskProfile({ autonomy: 'read_only' })).isAuthorized('fs__read')).toBe(false);
  });

  test('a per-run allow-list is a strict intersection without auto-admission', () => {
    const policy = createToolPolicy(normalizeRiskProfile({ allowedTools: ['cron_add'] }), { runAllowList: ['cron_add'] });
    expect(policy.isAuthorized('cron_add')).toBe(true);
    expect(policy.isAuthorized('filesystem__write_file')).toBe(false);
    const wider = createToolPolicy(normalizeRiskProfile({ excludedTools: ['fs__rm'] }), { runAllowList: ['fs__rm', 'fs__ls'] });
    expect(wider.isAuthorized('fs__ls')).toBe(true);
    expect(wider.isAuthorized('fs__rm')).toBe(false);
    expect(wider.isAuthorized('fs__cat')).toBe(false);
  });

  test('patterns: *, prefix*', () => {
    const policy = createToolPolicy(normalizeRiskProfile({ excludedTools: ['danger__*'] }));
    expect(policy.isAuthorized('danger__x')).toBe(false);
    expect(policy.isAuthorized('safe__x')).toBe(true);
  });
});

describe('createToolPolicy approval', () => {
  test('supervised asks unless auto_approve matches; always_ask wins over everything', () => {
    const policy = createToolPolicy(normalizeRiskProfile({ autoApprove: ['fs__read_file', 'web__*'], alwaysAsk: ['web__post'] }));
    expect(policy.needsApproval('fs__read_file')).toBe(false);
    expect(policy.needsApproval('fs__write_file')).toBe(true);
    expect(policy.needsApproval('web__get')).toBe(false);
    expect(policy.needsApproval('web__post')).toBe(true);
    expect(createToolPolicy(normalizeRiskProfile({ autoApprove: ['*'] })).needsApproval('x__y')).toBe(false);
  });

  test('full autonomy asks only for always_ask (including *)', () => {
    expect(createToolPolicy(normalizeRiskProfile({ autonomy: 'full' })).needsApproval('x__y')).toBe(false);
    expect(createToolPolicy(normalizeRiskProfile({ autonomy: 'full', alwaysAsk: ['*'] })).needsApproval('x__y')).toBe(true);
  });
});

describe('createPolicyHook', () => {
  const setup = (profile: Parameters<typeof normalizeRiskProfile>[0], approve?: (name: string) => boolean) => {
    const calls: string[] = [];
    const registry = createRegistry([
      defineCapability({
        category: 'mcp',
        commands: ['fs__read', 'fs__write'].map((name) => defineCommand({ name, description: name, execute: () => (calls.push(name), 'ran') })),
      }),
      defineCapability({ category: 'clock', commands: [defineCommand({ name: 'clock.now', description: 'now', execute: () => 'tick' })] }),
    ]);
    const hook = createPolicyHook({
      policy: createToolPolicy(normalizeRiskProfile(profile)),
      lookup: (name) => (name.startsWith('fs__') ? { server: 'fs', tool: name.slice(4) } : undefined),
      ...(approve ? { approve: (request) => approve(request.name) } : {}),
    });
    return { calls, invoker: createInvoker({ registry, hooks: [hook] }) };
  };

  test('refuses unauthorized calls and calls needing approval without an approver', async () => {
    const { calls, invoker } = setup({ excludedTools: ['fs__write'] });
    const denied = await invoker.invoke({ command: 'fs__write', transport: 'internal' });
    expect(denied.result).toMatchObject({ ok: false, error: { code: 'denied' } });
    const unapproved = await invoker.invoke({ command: 'fs__read', transport: 'internal' });
    expect(unapproved.result).toMatchObject({ ok: false, error: { code: 'denied', message: expect.stringMatching(/needs approval/) } });
    expect((await invoker.invoke({ command: 'clock.now', transport: 'internal' })).result.ok).toBe(true);
    expect(calls).toEqual([]);
  });

  test('asks the approver and honours its answer', async () => {
    const asked: string[] = [];
    const { calls, invoker } = setup({}, (name) => (asked.push(name), name === 'fs__read'));
    expect((await invoker.invoke({ command: 'fs__read', transport: 'internal' })).result.ok).toBe(true);
    expect((await invoker.invoke({ command: 'fs__write', transport: 'internal' })).result).toMatchObject({ ok: false, error: { code: 'denied' } });
    expect(asked).toEqual(['fs__read', 'fs__write']);
    expect(calls).toEqual(['fs__read']);
  });
});
