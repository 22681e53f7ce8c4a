import { describe, expect, it } from 'vitest';
import { createApprovalBroker } from './approvalBroker.js';
import { createConsentHook, createMemoryConsentStore, consentSettingsSchema, type ConsentStore } from './consent.js';
import { defineCapability, defineCommand, type Transport } from './contract.js';
import { createInvoker } from './pipeline.js';
import { createRegistry } from './registry.js';
import { failureOf, nextPending } from '../../../tests/support/invocation.js';
import { z } from 'zod';

function setup(store: ConsentStore & { set?: unknown } = createMemoryConsentStore()) {
  const ran: unknown[] = [];
  const broker = createApprovalBroker({ timeoutMs: 60_000, waitMode: () => 'block' });
  const registry = createRegistry([
    defineCapability({
      category: 'screen',
      commands: [
        defineCommand({ name: 'screen.snapshot', description: 'snap', consent: 'screen', input: z.object({ label: z.string().optional() }), execute: (args) => (ran.push(args), 'snapped') }),
        defineCommand({ name: 'plain.echo', description: 'echo', execute: () => 'echo' }),
        defineCommand({ name: 'screen.any', description: 'any arguments', consent: 'screen', execute: () => 'any' }),
        defineCommand({ name: 'screen.record', description: 'record', consent: 'screen', input: z.object({ includeAudio: z.boolean().default(false) }), consentFor: (args: { includeAudio: boolean }) => (args.includeAudio ? ['microphone' as const] : []), execute: (args) => (ran.push(args), 'recorded') }),
      ],
    }),
  ]);
  const invoker = createInvoker({ registry, hooks: [createConsentHook({ store, broker })] });
  const call = (args: unknown = {}, transport: Transport = 'mcp-http') => invoker.invoke({ command: 'screen.snapshot', args, transport, caller: 'agent' });
  return { ran, broker, call, invoker, [Symbol.asyncDispose]: () => broker.close() };
}

const TRANSPORTS: readonly Transport[] = ['mcp-http', 'mcp-stdio', 'gateway', 'cli', 'internal'];

describe('consent hook', () => {
  it('every category is off by default', () => {
    expect(consentSettingsSchema.parse({})).toEqual({ screen: 'off', camera: 'off', microphone: 'off', location: 'off', files: 'off', computer: 'off', browser: 'off', allowed: [] });
  });

  it.each(TRANSPORTS)('off refuses consent_required over %s, naming the command that turns it on; nothing runs', async (transport) => {
    await using t = setup();
    const error = failureOf((await t.call({}, transport)).result);
    expect(error.code).toBe('consent_required');
    expect(error.message).toBe('screen access is off: turn it on with `capnode consent set screen ask` (or allow)');
    expect(t.ran).toEqual([]);
    expect(t.broker.list()).toEqual([]);
  });

  it('commands without consent are untouched', async () => {
    await using t = setup();
    expect((await t.invoker.invoke({ command: 'plain.echo', transport: 'gateway' })).result.ok).toBe(true);
  });

  it('allow runs at once', async () => {
    await using t = setup(createMemoryConsentStore({ screen: 'allow' }));
    expect((await t.call({ label: 'x' }, 'gateway')).result.ok).toBe(true);
    expect(t.ran).toEqual([{ label: 'x' }]);
  });

  it('ask goes to the broker with the command and its escaped parameters; allow-once runs once', async () => {
    await using t = setup(createMemoryConsentStore({ screen: 'ask' }));
    const pending = t.call({ label: 'evil\u001b[2Jline\nnext' }, 'gateway');
    const approval = await nextPending(t.broker);
    expect(approval.command).toBe('screen.snapshot');
    expect(approval.summary).toContain('asks for screen access with {"label":"evil\\u001b[2Jline\\nnext"}');
    expect(approval.transport).toBe('gateway');
    t.broker.resolve(approval.id, 'allow-once');
    expect((await pending).result.ok).toBe(true);
    // Asked again next time.
    const again = t.call({}, 'cli');
    const second = await nextPending(t.broker);
    t.broker.resolve(second.id, 'deny');
    expect(failureOf((await again).result).code).toBe('denied');
    expect(t.ran).toHaveLength(1);
  });

  it('allow-always records a grant for that command and category; off still wins over it', async () => {
    const store = createMemoryConsentStore({ screen: 'ask' });
    await using t = setup(store);
    const pending = t.call({});
    t.broker.resolve((await nextPending(t.broker)).id, 'allow-always');
    expect((await pending).result.ok).toBe(true);
    expect((await store.get()).allowed).toEqual([{ command: 'screen.snapshot', category: 'screen' }]);
    expect((await t.call({ label: 'other' })).result.ok).toBe(true);
    expect(t.broker.list()).toEqual([]);
    store.set('screen', 'off');
    expect(failureOf((await t.call({})).result).code).toBe('consent_required');
  });

  it('a category turned off while its request was pending runs nothing', async () => {
    const store = createMemoryConsentStore({ screen: 'ask' });
    await using t = setup(store);
    const pending = t.call({});
    const approval = await nextPending(t.broker);
    store.set('screen', 'off');
    t.broker.resolve(approval.id, 'allow-once');
    expect(failureOf((await pending).result).code).toBe('consent_required');
    expect(t.ran).toEqual([]);
  });

  it('unreadable consent settings grant nothing', async () => {
    await using t = setup({ get: () => { throw new Error('bad file'); }, grant: async () => {} });
    const error = failureOf((await t.call({})).result);
    expect(error.code).toBe('consent_required');
    expect(t.ran).toEqual([]);
  });

  it('a grant for screen.snapshot does not cover screen.record, nor a case variant of another command', async () => {
    const store = createMemoryConsentStore({ screen: 'ask', allowed: [{ command: 'SCREEN.SNAPSHOT', category: 'screen' }] });
    await using t = setup(store);
    // The grant matches its own command whatever the case the caller sends.
    expect((await t.invoker.invoke({ command: 'Screen.Snapshot', args: {}, transport: 'mcp-http' })).result.ok).toBe(true);
    const record = t.invoker.invoke({ command: 'SCREEN.RECORD', args: {}, transport: 'mcp-http' });
    const approval = await nextPending(t.broker);
    expect(approval.command).toBe('screen.record');
    t.broker.resolve(approval.id, 'deny');
    expect(failureOf((await record).result).code).toBe('denied');
  });

  it('consentFor adds categories by argument: sound needs microphone too, off refuses, ask asks once for both', async () => {
    const store = createMemoryConsentStore({ screen: 'allow' });
    await using t = setup(store);
    const record = (args: unknown) => t.invoker.invoke({ command: 'screen.record', args, transport: 'gateway' });
    expect((await record({})).result.ok).toBe(true);
    const refused = failureOf((await record({ includeAudio: true })).result);
    expect(refused.code).toBe('consent_required');
    expect(refused.data).toMatchObject({ category: 'microphone' });
    expect(t.ran).toHaveLength(1);
    store.set('screen', 'ask');
    store.set('microphone', 'ask');
    const asked = record({ includeAudio: true });
    const approval = await nextPending(t.broker);
    expect(approval.summary).toContain('asks for screen and microphone access');
    t.broker.resolve(approval.id, 'allow-always');
    expect((await asked).result.ok).toBe(true);
    expect((await store.get()).allowed).toEqual([
      { command: 'screen.record', category: 'screen' },
      { command: 'screen.record', category: 'microphone' },
    ]);
    store.set('microphone', 'off');
    expect(failureOf((await record({ includeAudio: true })).result).code).toBe('consent_required');
    expect((await record({})).result.ok).toBe(true);
  });

  it('a long argument cannot hide its end from the person asked: the tail of every long string is shown', async () => {
    await using t = setup(createMemoryConsentStore({ screen: 'ask' }));
    const hidden = `/tmp/harmless.png${'/'.repeat(400)}../../home/user/.ssh/id_ed25519`;
    const pending = t.call({ label: hidden });
    const approval = await nextPending(t.broker);
    expect(approval.summary).toContain('../../home/user/.ssh/id_ed25519');
    expect(approval.summary).toContain('/tmp/harmless.png');
    expect(approval.summary!.length).toBeLessThan(1200);
    t.broker.resolve(approval.id, 'deny');
    await pending;
  });

  it('many long arguments before it cannot push a later one out of sight either', async () => {
    await using t = setup(createMemoryConsentStore({ screen: 'ask' }));
    const args = { phrases: Array.from({ length: 500 }, (_, index) => `${index} ${'p'.repeat(200)}`), inputPath: '/home/user/secret.wav' };
    const pending = t.invoker.invoke({ command: 'screen.any', args, transport: 'gateway' });
    const approval = await nextPending(t.broker);
    expect(approval.summary).toContain('"inputPath":"/home/user/secret.wav"');
    expect(approval.summary).toContain('(495 more)');
    t.broker.resolve(approval.id, 'deny');
    await pending;
  });
});
