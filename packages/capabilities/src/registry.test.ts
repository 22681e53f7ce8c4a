import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineCapability, defineCommand } from './contract.js';
import { isCapabilityError } from './errors.js';
import { createRegistry, isReservedCommandName, toInputJsonSchema, type RegistryChange } from './registry.js';

const echo = defineCommand({ name: 'Demo.Echo', description: 'Echoes.', input: z.object({ text: z.string() }), execute: ({ text }) => text });
const local = defineCommand({ name: 'app.secret', description: 'Local only.', localOnly: true, execute: () => 'ok' });
const demo = defineCapability({ category: 'demo', commands: [echo] });
const app = defineCapability({ category: 'app', commands: [local] });

describe('createRegistry', () => {
  it("resolves a command by its underscore spelling, and refuses a command whose underscore spelling is another's, naming both", () => {
    const registry = createRegistry([demo]);
    expect(registry.resolve('demo_echo')?.name).toBe('Demo.Echo');
    expect(registry.resolve('DEMO_ECHO')?.name).toBe('Demo.Echo');
    const refusal = (name: string, category = 'clash'): string => {
      try {
        registry.register(defineCapability({ category, commands: [defineCommand({ name, description: 'x', execute: () => 'x' })] }));
      } catch (error) {
        expect(isCapabilityError(error)).toBe(true);
        return (error as Error).message;
      }
      throw new Error(`${name} was registered`);
    };
    expect(refusal('demo_echo')).toBe("command 'demo_echo' collides with command 'Demo.Echo': both are 'demo_echo' in underscore spelling (tool names with '.' as '_'); rename one of them");
    // Two dotted names with one underscore spelling; a name without dots that another's spelling takes.
    registry.register(defineCapability({ category: 'a', commands: [defineCommand({ name: 'a.b_c', description: 'x', execute: () => 'x' })] }));
    expect(refusal('a_b.c')).toContain("collides with command 'a.b_c'");
    expect(refusal('a_b_c')).toContain("'a.b_c'");
    // Within one capability too; nothing of a refused capability stays.
    const both = defineCapability({ category: 'both', commands: [defineCommand({ name: 'x.y', description: 'x', execute: () => 'x' }), defineCommand({ name: 'x_y', description: 'x', execute: () => 'x' })] });
    expect(() => registry.register(both)).toThrow(/'x_y' collides with command 'x.y'/);
    expect(registry.resolve('x.y')).toBeUndefined();
    // Unregistering frees both spellings.
    registry.unregister(demo);
    expect(registry.resolve('demo_echo')).toBeUndefined();
    registry.register(defineCapability({ category: 'free', commands: [defineCommand({ name: 'demo_echo', description: 'x', execute: () => 'x' })] }));
  });

  it('makes a capability registered at any time visible and removes it on unregister', () => {
    const registry = createRegistry();
    expect(registry.commands()).toEqual([]);
    registry.register(demo);
    expect(registry.commands().map((c) => c.name)).toEqual(['Demo.Echo']);
    registry.register(app);
    expect(registry.commands().map((c) => c.name)).toEqual(['Demo.Echo', 'app.secret']);
    expect(registry.capabilities()).toEqual([demo, app]);
    expect(registry.unregister(demo)).toBe(true);
    expect(registry.commands().map((c) => c.name)).toEqual(['app.secret']);
    expect(registry.resolve('demo.echo')).toBeUndefined();
    expect(registry.unregister(demo)).toBe(false);
  });

  it('returns an unregister function from register', () => {
    const registry = createRegistry();
    const remove = registry.register(demo);
    remove();
    expect(registry.commands()).toEqual([]);
    remove();
    expect(registry.version).toBe(2);
  });

  it('accepts initial capabilities', () => {
    const registry = createRegistry([demo, app]);
    expect(registry.commands()).toHaveLength(2);
  });

  it('resolves names case-insensitively and reports the canonical name', () => {
    const registry = createRegistry([demo]);
    for (const spelling of ['Demo.Echo', 'demo.echo', 'DEMO.ECHO']) {
      const found = registry.resolve(spelling);
      expect(found?.name).toBe('Demo.Echo');
      expect(found?.category).toBe('demo');
      expect(found?.definition).toBe(echo);
    }
    expect(registry.resolve('demo.echoo')).toBeUndefined();
  });

  it('rejects duplicate command names case-insensitively, across and within capabilities, without partial registration', () => {
    const registry = createRegistry([demo]);
    const clash = defineCapability({ category: 'other', commands: [{ ...echo, name: 'demo.ECHO' }] });
    expect(() => registry.register(clash)).toThrow(/already registered/);
    const selfClash = defineCapability({
      category: 'self',
      commands: [defineCommand({ name: 'x.one', description: '', execute: () => '' }), defineCommand({ name: 'X.ONE', description: '', execute: () => '' })],
    });
    expect(() => registry.register(selfClash)).toThrow(/already registered/);
    expect(registry.resolve('x.one')).toBeUndefined();
    expect(registry.commands()).toHaveLength(1);
    expect(registry.version).toBe(1);
  });

  it('rejects the same capability twice and empty command names', () => {
    const registry = createRegistry([demo]);
    expect(() => registry.register(demo)).toThrow(/already registered/);
    const empty = defineCapability({ category: 'empty', commands: [defineCommand({ name: ' ', description: '', execute: () => '' })] });
    try {
      registry.register(empty);
      expect.unreachable();
    } catch (error) {
      expect(isCapabilityError(error)).toBe(true);
      expect(String(error)).toMatch(/empty name/);
    }
  });

  it('refuses command names in the reserved capnode. namespace, in any case and with any padding, registering nothing', () => {
    const registry = createRegistry([demo]);
    for (const name of ['capnode.settings', 'CapNode.Token.Rotate', ' capnode.session.signin']) {
      const forged = defineCapability({ category: 'forger', commands: [defineCommand({ name: 'forger.ok', description: '', execute: () => '' }), defineCommand({ name, description: '', execute: () => '' })] });
      expect(() => registry.register(forged)).toThrow(/reserved 'capnode\.' namespace/);
      expect(registry.resolve('forger.ok')).toBeUndefined();
    }
    expect(registry.version).toBe(1);
    expect(isReservedCommandName('capnode.settings')).toBe(true);
    expect(isReservedCommandName('capnode__tool')).toBe(false);
    expect(isReservedCommandName('system.run')).toBe(false);
  });

  it('emits change events with a growing version and keeps going when a listener throws', () => {
    const registry = createRegistry();
    const changes: RegistryChange[] = [];
    registry.subscribe(() => {
      throw new Error('listener bug');
    });
    const unsubscribe = registry.subscribe((change) => changes.push(change));
    expect(registry.version).toBe(0);
    registry.register(demo);
    registry.register(app);
    registry.unregister(demo);
    expect(changes).toEqual([
      { version: 1, added: ['Demo.Echo'], removed: [] },
      { version: 2, added: ['app.secret'], removed: [] },
      { version: 3, added: [], removed: ['Demo.Echo'] },
    ]);
    expect(registry.version).toBe(3);
    unsubscribe();
    registry.unregister(app);
    expect(changes).toHaveLength(3);
    expect(registry.version).toBe(4);
  });

  it('leaves localOnly commands out for gateways when asked', () => {
    const registry = createRegistry([demo, app]);
    expect(registry.commands({ excludeLocalOnly: true }).map((c) => c.name)).toEqual(['Demo.Echo']);
    expect(registry.commands({ excludeLocalOnly: false }).map((c) => c.name)).toEqual(['Demo.Echo', 'app.secret']);
  });

  it('computes the JSON Schema once at registration', () => {
    const registry = createRegistry([demo, app]);
    const schema = registry.resolve('demo.echo')!.inputSchema;
    expect(schema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    expect(schema).toHaveProperty('$schema', 'https://json-schema.org/draft/2020-12/schema');
    expect(registry.resolve('demo.echo')!.inputSchema).toBe(schema);
    expect(registry.resolve('app.secret')!.inputSchema).toEqual({ type: 'object', additionalProperties: true });
  });
});

describe('toInputJsonSchema', () => {
  it('gives a permissive object schema when there is no input', () => {
    expect(toInputJsonSchema(undefined)).toEqual({ type: 'object', additionalProperties: true });
  });

  it('exports the input side of a zod object (defaults optional, descriptions kept)', () => {
    const schema = toInputJsonSchema(
      z.object({ path: z.string().describe('File path'), limit: z.number().int().default(10), mode: z.enum(['a', 'b']).optional() }),
    );
    expect(schema.type).toBe('object');
    expect(schema.properties).toMatchObject({ path: { type: 'string', description: 'File path' }, limit: { type: 'integer', default: 10 }, mode: { enum: ['a', 'b'] } });
    expect(schema.required).toEqual(['path']);
  });

  it('falls back to a permissive object schema for non-object inputs', () => {
    expect(toInputJsonSchema(z.string())).toEqual({ type: 'object', additionalProperties: true });
  });

  it('does not throw for parts JSON Schema cannot express', () => {
    const schema = toInputJsonSchema(z.object({ when: z.date(), big: z.bigint() }));
    expect(schema.type).toBe('object');
  });
});
