import { createInvoker, createRegistry, defineCapability, defineCommand } from '@capnode/capabilities';
import { describe, expect, it } from 'vitest';
import { createAvailabilityGate } from './pluginsAvailability.js';

describe('availability gate', () => {
  it('wraps unavailable commands (probe says so, throws, answers garbage, never answers); available ones are untouched', async () => {
    const gate = createAvailabilityGate();
    let probeSignal: AbortSignal | undefined;
    const ran: string[] = [];
    const capability = defineCapability({
      category: 'x',
      commands: [
        defineCommand({ name: 'x.ok', description: '', availability: () => ({ available: true }), execute: () => (ran.push('ok'), 'ok') }),
        defineCommand({ name: 'x.none', description: '', execute: () => 'none' }),
        defineCommand({ name: 'x.missing', description: '', consent: 'screen', availability: async () => ({ available: false, install: 'ffmpeg' }), execute: () => (ran.push('missing'), '') }),
        defineCommand({ name: 'x.throws', description: '', availability: () => { throw new Error('boom'); }, execute: () => '' }),
        defineCommand({ name: 'x.garbage', description: '', availability: () => 'yes' as never, execute: () => '' }),
        defineCommand({ name: 'x.hangs', description: '', availability: ({ signal }) => ((probeSignal = signal), new Promise(() => {})), execute: () => '' }),
      ],
    });
    const { capability: wrapped, unavailable } = await gate.probe(capability, { timeoutMs: 50 });
    expect(unavailable.map((entry) => entry.command)).toEqual(['x.missing', 'x.throws', 'x.garbage', 'x.hangs']);
    expect(unavailable[0]!.install).toBe('ffmpeg');
    expect(unavailable[1]!.install).toContain('failed: boom');
    expect(unavailable[3]!.install).toContain('did not answer within 50 ms');
    expect(probeSignal?.aborted).toBe(true);
    expect(wrapped.commands[0]).toBe(capability.commands[0]);
    expect(wrapped.commands[2]).toMatchObject({ name: 'x.missing', localOnly: true, consent: 'screen' });

    const registry = createRegistry([wrapped]);
    let consentAsked = false;
    const invoker = createInvoker({ registry, hooks: [gate.hook, { beforeInvoke: () => void (consentAsked = true) }] });
    const outcome = await invoker.invoke({ command: 'x.missing', transport: 'mcp-http' });
    expect(outcome.result).toMatchObject({ ok: false, error: { code: 'unavailable', message: 'unavailable here: install ffmpeg' } });
    // Refused before any later hook (consent, approval) asks anyone.
    expect(consentAsked).toBe(false);
    expect((await invoker.invoke({ command: 'x.ok', transport: 'mcp-http' })).result.ok).toBe(true);
    expect(ran).toEqual(['ok']);
    expect(registry.commands({ excludeLocalOnly: true }).map((command) => command.name)).toEqual(['x.ok', 'x.none']);
  });

  it('returns the capability itself when everything is available', async () => {
    const capability = defineCapability({ category: 'y', commands: [defineCommand({ name: 'y.a', description: '', execute: () => '' })] });
    expect((await createAvailabilityGate().probe(capability)).capability).toBe(capability);
  });
});
