import { describe, expect, it } from 'vitest';
import { createInvokeLedger } from './invokeLedger.js';

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('invoke ledger', () => {
  it('runs at most maxConcurrent at once and answers the rest busy', async () => {
    const ledger = createInvokeLedger<string>({ maxConcurrent: 8 });
    const gate = deferred<void>();
    const tickets = Array.from({ length: 9 }, (_, i) => ledger.submit({ invokeId: `i${i}`, key: `k${i}`, fingerprint: 'f', run: async () => (await gate.promise, `r${i}`) }));
    expect(tickets.map((t) => t.admission)).toEqual([...Array(8).fill('started'), 'busy']);
    expect(ledger.stats()).toMatchObject({ running: 8, busy: 1 });
    gate.resolve();
    await Promise.all(tickets.slice(0, 8).map((t) => ('result' in t ? t.result : undefined)));
    expect(ledger.stats().running).toBe(0);
    expect(ledger.submit({ invokeId: 'i9', key: 'k9', fingerprint: 'f', run: async () => 'later' }).admission).toBe('started');
  });

  it('joins a running key and replays a finished one instead of running again', async () => {
    const ledger = createInvokeLedger<string>();
    let runs = 0;
    const gate = deferred<void>();
    const run = async () => {
      runs += 1;
      await gate.promise;
      return 'done';
    };
    const first = ledger.submit({ invokeId: 'a', key: 'k', fingerprint: 'f', run });
    const second = ledger.submit({ invokeId: 'b', key: 'k', fingerprint: 'f', run });
    expect([first.admission, second.admission]).toEqual(['started', 'joined']);
    gate.resolve();
    expect(await ('result' in second ? second.result : undefined)).toBe('done');
    const third = ledger.submit({ invokeId: 'c', key: 'k', fingerprint: 'f', run });
    expect(third.admission).toBe('replayed');
    expect(await ('result' in third ? third.result : undefined)).toBe('done');
    expect(runs).toBe(1);
  });

  it('refuses a key reused for different arguments', async () => {
    const ledger = createInvokeLedger<string>();
    const gate = deferred<void>();
    ledger.submit({ invokeId: 'a', key: 'k', fingerprint: 'f1', run: async () => (await gate.promise, 'x') });
    expect(ledger.submit({ invokeId: 'b', key: 'k', fingerprint: 'f2', run: async () => 'y' }).admission).toBe('conflict');
    gate.resolve();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(ledger.submit({ invokeId: 'c', key: 'k', fingerprint: 'f2', run: async () => 'y' }).admission).toBe('conflict');
  });

  it('aborts a run only when every caller cancelled', async () => {
    const ledger = createInvokeLedger<string>();
    let signal!: AbortSignal;
    const first = ledger.submit({
      invokeId: 'a',
      key: 'k',
      fingerprint: 'f',
      run: (s) => {
        signal = s;
        return new Promise((_, reject) => s.addEventListener('abort', () => reject(new Error('aborted'))));
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 0));
    ledger.submit({ invokeId: 'b', key: 'k', fingerprint: 'f', run: async () => 'never' });
    expect(ledger.cancel('a')).toBe(true);
    expect(signal.aborted).toBe(false);
    expect(ledger.cancel('b')).toBe(true);
    expect(signal.aborted).toBe(true);
    await expect('result' in first ? first.result : undefined).rejects.toThrow('aborted');
    expect(ledger.cancel('unknown')).toBe(false);
    // A failed run is not remembered: a retry runs again.
    expect(ledger.submit({ invokeId: 'c', key: 'k', fingerprint: 'f', run: async () => 'again' }).admission).toBe('started');
  });

  it('forgets results after rememberMs and beyond maxRemembered, without timers', async () => {
    let now = 0;
    const ledger = createInvokeLedger<number>({ rememberMs: 1_000, maxRemembered: 2, now: () => now });
    for (const key of ['a', 'b', 'c']) {
      const ticket = ledger.submit({ invokeId: key, key, fingerprint: 'f', run: async () => 1 });
      await ('result' in ticket ? ticket.result : undefined);
    }
    expect(ledger.stats().remembered).toBe(2);
    expect(ledger.submit({ invokeId: 'a2', key: 'a', fingerprint: 'f', run: async () => 2 }).admission).toBe('started');
    expect(ledger.submit({ invokeId: 'c2', key: 'c', fingerprint: 'f', run: async () => 2 }).admission).toBe('replayed');
    now = 5_000;
    expect(ledger.submit({ invokeId: 'c3', key: 'c', fingerprint: 'f', run: async () => 3 }).admission).toBe('started');
  });

  it('idle resolves once nothing runs, or at its deadline while something still runs', async () => {
    const ledger = createInvokeLedger<string>();
    await ledger.idle();
    const gate = deferred<void>();
    const ticket = ledger.submit({ invokeId: 'a', key: 'a', fingerprint: 'f', run: async () => (await gate.promise, 'done') });
    await ledger.idle(20);
    await ledger.idle(-1);
    expect(ledger.stats().running).toBe(1);
    const idle = ledger.idle();
    gate.resolve();
    await idle;
    expect(ledger.stats().running).toBe(0);
    expect('result' in ticket && (await ticket.result)).toBe('done');
  });

  it('close aborts running work and refuses new work', async () => {
    const ledger = createInvokeLedger<string>();
    let signal!: AbortSignal;
    ledger.submit({
      invokeId: 'a',
      key: 'a',
      fingerprint: 'f',
      run: (s) => {
        signal = s;
        return new Promise(() => {});
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 0));
    ledger.close();
    expect(signal.aborted).toBe(true);
    expect(ledger.submit({ invokeId: 'b', key: 'b', fingerprint: 'f', run: async () => 'x' }).admission).toBe('busy');
  });
});
