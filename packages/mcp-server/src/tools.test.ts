import { fail, json } from '@capnode/capabilities';
import { describe, expect, it } from 'vitest';
import { FAILURE_META_KEY, toCallToolResult, toolFailureCode } from './tools.js';

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
