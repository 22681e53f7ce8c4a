import { describe, expect, test } from 'vitest';
import { boundInputSchema, boundListedTool, boundToolContent, checkJson, CONTENT_LIMITS, DROPPED_META_KEY, safeJson, truncateText } from './contentLimits.js';

function deep(levels: number): Record<string, unknown> {
  const root: Record<string, unknown> = { type: 'object' };
  let at = root;
  for (let i = 0; i < levels; i += 1) {
    const next: Record<string, unknown> = { type: 'object' };
    at.properties = { x: next };
    at = next;
  }
  return root;
}

describe('checkJson', () => {
  test('counts depth without recursion, even 100,000 levels down', () => {
    expect(checkJson({ a: [1, { b: 'c' }] }, { maxDepth: 3, maxChars: 1_000 })).toMatchObject({ ok: true });
    expect(checkJson({ a: [1, { b: 'c' }] }, { maxDepth: 2, maxChars: 1_000 })).toEqual({ ok: false, reason: 'nested deeper than 2 levels' });
    let value: unknown = 'leaf';
    for (let i = 0; i < 100_000; i += 1) value = [value];
    expect(() => JSON.stringify(value)).toThrow(RangeError);
    expect(checkJson(value, CONTENT_LIMITS.structuredContent)).toEqual({ ok: false, reason: 'nested deeper than 32 levels' });
  });

  test('stops at the size limit before walking the rest', () => {
    expect(checkJson('x'.repeat(2 * 1024 * 1024), CONTENT_LIMITS.inputSchema)).toEqual({ ok: false, reason: 'larger than 256 KiB' });
    expect(checkJson(new Array(10_000_000).fill(0), CONTENT_LIMITS.structuredContent)).toEqual({ ok: false, reason: 'larger than 1 MiB' });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(checkJson(cyclic, CONTENT_LIMITS.contentMeta).ok).toBe(false);
    expect(checkJson({ f: () => 1 }, CONTENT_LIMITS.contentMeta)).toEqual({ ok: false, reason: 'not serializable (function)' });
  });
});

test('truncateText marks the cut and never splits a surrogate pair', () => {
  expect(truncateText('abcdef', 10)).toBe('abcdef');
  expect(truncateText('abcdef', 3)).toBe('abc\n[capnode: truncated 3 more characters]');
  expect(truncateText('ab😀cd', 3)).toBe('ab\n[capnode: truncated 4 more characters]');
});

describe('boundInputSchema', () => {
  test('keeps a schema within 32 levels of JSON nesting and 256 KiB', () => {
    const schema = deep(15); // 31 levels: each nested property adds `properties` and the property schema
    expect(boundInputSchema(schema)).toEqual({ schema });
    expect(boundInputSchema(deep(16)).schema).toEqual({ type: 'object' });
  });

  test('replaces a deep or huge schema by {type:"object"} with a note', () => {
    const tooDeep = boundInputSchema(deep(5_000));
    expect(tooDeep.schema).toEqual({ type: 'object' });
    expect(tooDeep.note).toBe('[capnode: inputSchema replaced by {"type":"object"}: the server\'s schema is nested deeper than 32 levels]');
    const huge = boundInputSchema({ type: 'object', description: 'x'.repeat(2 * 1024 * 1024) });
    expect(huge.schema).toEqual({ type: 'object' });
    expect(huge.note).toContain('larger than 256 KiB');
  });
});

describe('boundToolContent', () => {
  test('returns the same arrays when everything is within limits', () => {
    const content = [{ type: 'text', text: 'hi', annotations: { audience: ['user'] } }];
    const bounded = boundToolContent(content, { a: 1 });
    expect(bounded.content).toBe(content);
    expect(bounded.structuredContent).toEqual({ a: 1 });
  });

  test('cuts text across items at the tool-text budget', () => {
    const bounded = boundToolContent([{ type: 'text', text: 'a'.repeat(8) }, { type: 'resource', resource: { uri: 'u', text: 'b'.repeat(8) } }, { type: 'text', text: 'c' }], undefined, 10);
    expect(bounded.content).toEqual([
      { type: 'text', text: 'a'.repeat(8) },
      { type: 'resource', resource: { uri: 'u', text: 'bb\n[capnode: truncated 6 more characters]' } },
      { type: 'text', text: '[capnode: truncated 1 more characters]' },
    ]);
  });

  test('deep or huge annotations, _meta, fields and structured content are degraded with markers, never thrown later', () => {
    let deepValue: unknown = 1;
    for (let i = 0; i < 5_000; i += 1) deepValue = { a: deepValue };
    const bounded = boundToolContent(
      [
        { type: 'text', text: 'ok', annotations: deepValue, _meta: { keep: true } },
        { type: 'text', text: 'ok2', _meta: { big: 'x'.repeat(100_000) } },
        { type: 'resource_link', uri: 'file:///a', name: 'n'.repeat(100_000) },
        { type: 'image', data: 'AAAA', mimeType: 'image/png', extra: deepValue },
      ],
      deepValue,
    );
    expect(() => JSON.stringify(bounded)).not.toThrow();
    expect(bounded.structuredContent).toBeUndefined();
    expect(bounded.content).toEqual([
      { type: 'text', text: 'ok', _meta: { keep: true, [DROPPED_META_KEY]: 'removed by capnode: annotations nested deeper than 8 levels' } },
      { type: 'text', text: 'ok2', _meta: { [DROPPED_META_KEY]: 'removed by capnode: _meta larger than 16 KiB' } },
      { type: 'text', text: '[capnode: content item omitted: its fields are larger than 16 KiB]' },
      { type: 'text', text: '[capnode: content item omitted: its fields are nested deeper than 8 levels]' },
      { type: 'text', text: '[capnode: structuredContent omitted: nested deeper than 32 levels]' },
    ]);
  });

  test('binary data has its own bounds and is not counted here', () => {
    const content = [{ type: 'image', data: 'A'.repeat(2 * 1024 * 1024), mimeType: 'image/png' }];
    expect(boundToolContent(content, undefined).content).toBe(content);
  });
});

test('safeJson never throws', () => {
  let value: unknown = 1;
  for (let i = 0; i < 10_000; i += 1) value = [value];
  expect(safeJson(value, CONTENT_LIMITS.contentMeta)).toBe('[capnode: value omitted: nested deeper than 16 levels]');
  expect(safeJson({ a: 1 }, CONTENT_LIMITS.contentMeta)).toBe('{"a":1}');
});

test('boundListedTool notes what it changed', () => {
  expect(boundListedTool('d', { type: 'object' }, { readOnlyHint: true })).toEqual({ description: 'd', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } });
  let hints: unknown = true;
  for (let i = 0; i < 10; i += 1) hints = { a: hints };
  const out = boundListedTool('', deep(5_000), hints as Record<string, unknown>);
  expect(out.inputSchema).toEqual({ type: 'object' });
  expect(out.description.startsWith('[capnode: inputSchema replaced')).toBe(true);
  expect(out.annotations).toBeUndefined();
  expect(out.degraded).toBe('inputSchema replaced by {"type":"object"} (over the content limits); annotations dropped (nested deeper than 4 levels)');
});
