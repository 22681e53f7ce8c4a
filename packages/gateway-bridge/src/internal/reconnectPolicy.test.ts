import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors.js';
import { SERVICE_RESTART_RETRY_MS, SERVICE_RESTART_WINDOW_MS, createReconnectPolicy } from './reconnectPolicy.js';

describe('reconnect policy', () => {
  it('backs off 1 s doubling to 30 s, honours retryAfterMs, and starts over after a handshake', () => {
    const policy = createReconnectPolicy({ random: () => 0 });
    expect([1, 2, 3, 4, 5, 6, 7].map(() => policy.nextDelay({}))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(policy.attempt).toBe(7);
    expect(policy.nextDelay({ failure: new GatewayError('unavailable', 'later', { retryable: true, retryAfterMs: 4_321 }) })).toBe(4_321);
    expect(policy.nextDelay({ immediate: true })).toBe(0);
    expect(policy.attempt).toBe(8);
    policy.connected();
    expect(policy.attempt).toBe(0);
    expect(policy.nextDelay({ closeCode: 1006, wasOpen: true })).toBe(1_000);
  });

  it('after a 1012 service restart close it retries every 500 ms for the restart window, then backs off as before', () => {
    let now = 0;
    const policy = createReconnectPolicy({ random: () => 0, now: () => now });
    const delays = [policy.nextDelay({ closeCode: 1012, wasOpen: true })];
    for (now = SERVICE_RESTART_RETRY_MS; now < SERVICE_RESTART_WINDOW_MS; now += SERVICE_RESTART_RETRY_MS) delays.push(policy.nextDelay({ closeCode: 1006, wasOpen: false }));
    expect(delays.every((delay) => delay === SERVICE_RESTART_RETRY_MS)).toBe(true);
    expect(SERVICE_RESTART_RETRY_MS).toBeLessThanOrEqual(1_000);
    // Past the window: the usual backoff from its first step.
    expect([policy.nextDelay({}), policy.nextDelay({}), policy.nextDelay({})]).toEqual([1_000, 2_000, 4_000]);
    // A 1012 during the handshake (not an open connection) is an ordinary failure.
    policy.connected();
    expect(policy.nextDelay({ closeCode: 1012, wasOpen: false })).toBe(1_000);
  });
});
