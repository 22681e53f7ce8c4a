import { createRegistry, defineCapability, defineCommand, fail, json } from '@capnode/capabilities';
import { describe, expect, it } from 'vitest';
import { FAILURE_META_KEY, createToolsListCache, toCallToolResult, toMcpTool, toolFailureCode } from './tools.js';

describe('tool results', () => {
  it('puts the failure code of an isError result under _meta["capnode/failure"], beside the text', () => {
    const result = toCallToolResult(fail('denied', 'the user said no'));
    expect(FAILURE_META_KEY).toBe('capnode/failure');
    expect(result).toEqual({ content: [{ type: 'text', text: 'the user said no' }], isError: true, _meta: { 'capnode/failure': { code: 'denied' } } });
    expect(toolFailureCode(result)).toBe('denied');
  });

  it('adds nothing to a success, and reads no code where there is none', () => {
    const result = toCallToolResult(json({ a: 1 }));
    expect(result).toEqual({ content: [{ type: 'text', text: '{\n  "a": 1\n}' }], structuredContent: { a: 1 } });
    expect(toolFailureCode(result)).toBeUndefined();
    expect(toolFailureCode({ isError: true })).toBeUndefined();
    expect(toolFailureCode({ isError: true, _meta: { [FAILURE_META_KEY]: { code: 1 } } })).toBeUndefined();
  });
});

describe('tools/list in a name style', () => {
  it('underscore spells every name with _ for ., leaves out (and reports) a name that still is no portable tool name; dotted lists all', () => {
    const long = `x.${'a'.repeat(70)}`;
    const registry = createRegistry([
      defineCapability({
        category: 'demo',
        commands: ['demo.echo', 'demo.has space', long, 'plain-name'].map((name) => defineCommand({ name, description: name, execute: () => 'ok' })),
      }),
    ]);
    const omitted: string[] = [];
    const list = createToolsListCache(registry, (name) => omitted.push(name));
    expect(list('dotted').tools.map((tool) => tool.name)).toEqual(['demo.echo', 'demo.has space', long, 'plain-name']);
    expect(list('underscore').tools.map((tool) => tool.name)).toEqual(['demo_echo', 'plain-name']);
    expect(omitted).toEqual(['demo.has space', long]);
    // Cached per registry version: the same objects until the registry changes.
    expect(list('underscore')).toBe(list('underscore'));
    expect(omitted).toHaveLength(2);
    expect(toMcpTool(registry.resolve('demo_echo')!, 'underscore').name).toBe('demo_echo');
  });
});
