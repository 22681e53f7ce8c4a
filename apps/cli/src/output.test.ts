import { describe, expect, it } from 'vitest';
import { failureCode } from './output.js';

describe('failureCode', () => {
  it('reads the code of an isError result from _meta["capnode/failure"]', () => {
    expect(failureCode({ isError: true, content: [{ type: 'text', text: 'whatever the wording' }], _meta: { 'capnode/failure': { code: 'unknown_command' } } })).toBe('unknown_command');
    expect(failureCode({ isError: true, _meta: { 'capnode/failure': { code: 'denied' } } })).toBe('denied');
  });

  it('never guesses from the text', () => {
    expect(failureCode({ isError: true, content: [{ type: 'text', text: 'Unknown tool: x' }] })).toBeUndefined();
    expect(failureCode({ isError: true, _meta: { 'capnode/failure': { code: 7 } } })).toBeUndefined();
    expect(failureCode({ isError: false, _meta: { 'capnode/failure': { code: 'denied' } } })).toBeUndefined();
    expect(failureCode({ content: [] })).toBeUndefined();
  });
});
