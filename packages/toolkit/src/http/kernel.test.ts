import { describe, expect, it } from 'vitest';
import { createHttpKernel } from './kernel.js';

const reply = { status: 500, body: null };
const options = {
  handle: () => reply,
  replies: { forbiddenPeer: reply, shuttingDown: reply, busy: reply, timeout: reply, internal: reply },
  onLog: () => {},
  drainTimeoutMs: 1_000,
};

describe('createHttpKernel', () => {
  it('refuses a request timeout that is not a finite number >= 0, and takes one that is', () => {
    for (const requestTimeoutMs of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createHttpKernel({ ...options, requestTimeoutMs })).toThrow(/requestTimeoutMs must be a finite number >= 0/);
    }
    expect(createHttpKernel(options).active).toBe(0);
    for (const requestTimeoutMs of [0, 30_000]) expect(createHttpKernel({ ...options, requestTimeoutMs }).active).toBe(0);
  });
});
