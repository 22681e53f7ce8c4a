import { describe, expect, it } from 'vitest';
import { createAsyncStack } from './asyncStack.js';

describe('createAsyncStack', () => {
  it('unwinds last pushed first, awaiting each, once', async () => {
    const order: string[] = [];
    const stack = createAsyncStack();
    stack.defer(() => order.push('first'));
    stack.use({ close: async () => void order.push('second') });
    stack.defer(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push('third');
    });
    await Promise.all([stack.disposeAsync(), stack.disposeAsync()]);
    expect(order).toEqual(['third', 'second', 'first']);
    expect(stack.disposed).toBe(true);
    expect(() => stack.defer(() => undefined)).toThrow(/disposed/);
  });

  it('runs every clean-up when one fails, then rejects with the first failure', async () => {
    const order: string[] = [];
    const stack = createAsyncStack();
    stack.defer(() => order.push('first'));
    stack.defer(() => {
      throw new Error('second failed');
    });
    stack.defer(() => Promise.reject(new Error('third failed')));
    await expect(stack.disposeAsync()).rejects.toThrow('third failed');
    expect(order).toEqual(['first']);
  });
});
