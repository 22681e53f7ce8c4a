import { describe, expect, it } from 'vitest';
import { Admission } from './admission.js';

describe('Admission', () => {
  it('admits up to the cap, then makes a request wait briefly and refuses it when no slot frees up', async () => {
    const admission = new Admission(2, 30);
    expect(admission.tryAcquire()).toBe(true);
    expect(await admission.acquire()).toBe(true);
    expect(admission.active).toBe(2);
    expect(await admission.acquire()).toBe(false);
    expect(admission.active).toBe(2);
  });

  it('hands a freed slot to the longest waiter', async () => {
    const admission = new Admission(1, 5_000);
    expect(admission.tryAcquire()).toBe(true);
    const first = admission.acquire();
    const second = admission.acquire();
    admission.release();
    expect(await first).toBe(true);
    expect(admission.active).toBe(1);
    admission.release();
    expect(await second).toBe(true);
    admission.release();
    expect(admission.active).toBe(0);
  });

  it('reports idleness, or gives up after a timeout', async () => {
    const admission = new Admission(4, 10);
    expect(await admission.idle(10)).toBe(true);
    admission.tryAcquire();
    expect(await admission.idle(20)).toBe(false);
    const idle = admission.idle(5_000);
    admission.release();
    expect(await idle).toBe(true);
  });
});
