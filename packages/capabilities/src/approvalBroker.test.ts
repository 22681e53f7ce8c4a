import { describe, expect, it } from 'vitest';
import { createApprovalBroker, type ApprovalEvent, type ApprovalRequestInput } from './approvalBroker.js';

const input: ApprovalRequestInput = { command: 'system.run', commandLine: 'git push', argv: ['git', 'push'], cwd: '/repo', caller: 'claude', transport: 'mcp-http' };

/** Waits until the broker lists `count` pending requests. */
async function pendingCount(broker: ReturnType<typeof createApprovalBroker>, count: number) {
  for (let i = 0; i < 200 && broker.list().length !== count; i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(broker.list()).toHaveLength(count);
  return broker.list();
}

describe('createApprovalBroker', () => {
  it('lists a pending request with id and times, and resolves it allow-once', async () => {
    await using broker = createApprovalBroker({ now: () => 1_000, timeoutMs: 60_000 });
    const answer = broker.request(input);
    const [pending] = broker.list();
    expect(pending).toEqual({ ...input, id: expect.stringMatching(/^[a-z2-7]{10}$/), createdAt: 1_000, expiresAt: 61_000 });
    expect(broker.resolve(pending!.id, 'allow-once')).toBe(true);
    expect(await answer).toEqual({ id: pending!.id, decision: 'allow-once', settlement: 'answered' });
    expect(broker.list()).toEqual([]);
  });

  it('gives each request a distinct unguessable id', async () => {
    await using broker = createApprovalBroker({ maxPendingPerCaller: 64 });
    for (let i = 0; i < 50; i += 1) void broker.request(input);
    const ids = broker.list().map((p) => p.id);
    expect(new Set(ids).size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^[a-z2-7]{10}$/);
  });

  it('resolves allow-always and deny as answered', async () => {
    await using broker = createApprovalBroker();
    const always = broker.request(input);
    const denied = broker.request({ ...input, commandLine: 'rm -rf /' });
    const [a, b] = broker.list();
    broker.resolve(a!.id, 'allow-always');
    broker.resolve(b!.id.toUpperCase(), 'deny');
    expect((await always).decision).toBe('allow-always');
    expect(await denied).toMatchObject({ decision: 'deny', settlement: 'answered' });
  });

  it('returns false for unknown or already answered ids and refuses unknown decisions', async () => {
    await using broker = createApprovalBroker();
    expect(broker.resolve('nosuchid00', 'allow-once')).toBe(false);
    const answer = broker.request(input);
    const id = broker.list()[0]!.id;
    expect(broker.resolve(id, 'deny')).toBe(true);
    expect(broker.resolve(id, 'allow-once')).toBe(false);
    expect((await answer).decision).toBe('deny');
    void broker.request(input);
    expect(() => broker.resolve(broker.list()[0]!.id, 'yes' as 'deny')).toThrow(/Unknown approval decision/);
  });

  it('counts a timeout as deny', async () => {
    await using broker = createApprovalBroker({ timeoutMs: 50 });
    const answer = await broker.request(input);
    expect(answer).toMatchObject({ decision: 'deny', settlement: 'timeout' });
    expect(broker.list()).toEqual([]);
    expect(broker.timeoutMs).toBe(50);
  });

  it('withdraws the request when the signal aborts, and rejects with its reason', async () => {
    await using broker = createApprovalBroker();
    const controller = new AbortController();
    const answer = broker.request(input, { signal: controller.signal });
    await pendingCount(broker, 1);
    controller.abort(new Error('caller went away'));
    await expect(answer).rejects.toThrow('caller went away');
    expect(broker.list()).toEqual([]);
    await expect(broker.request(input, { signal: AbortSignal.abort(new Error('already')) })).rejects.toThrow('already');
    expect(broker.list()).toEqual([]);
  });

  it('delivers an answer given synchronously inside the requested listener (a CLI that refuses at once)', async () => {
    await using broker = createApprovalBroker({ timeoutMs: 60_000 });
    broker.subscribe((event) => {
      if (event.type === 'requested') broker.resolve(event.approval.id, 'deny');
    });
    await expect(broker.request(input)).resolves.toMatchObject({ decision: 'deny', settlement: 'answered' });
    expect(broker.list()).toEqual([]);
  });

  it('publishes requested and resolved events and survives a failing listener', async () => {
    await using broker = createApprovalBroker({ timeoutMs: 50 });
    const events: ApprovalEvent[] = [];
    broker.subscribe(() => {
      throw new Error('listener bug');
    });
    const unsubscribe = broker.subscribe((event) => events.push(event));
    const answered = broker.request(input);
    const id = broker.list()[0]!.id;
    broker.resolve(id, 'allow-once');
    await answered;
    await broker.request(input);
    expect(events.map((e) => [e.type, e.type === 'resolved' ? e.settlement : '-', e.type === 'resolved' ? e.decision : '-'])).toEqual([
      ['requested', '-', '-'],
      ['resolved', 'answered', 'allow-once'],
      ['requested', '-', '-'],
      ['resolved', 'timeout', 'deny'],
    ]);
    expect(events[0]?.approval.id).toBe(id);
    unsubscribe();
    void broker.request(input);
    expect(events).toHaveLength(4);
  });

  it('denies every pending request on close, and later requests at once', async () => {
    const broker = createApprovalBroker();
    const first = broker.request(input);
    const second = broker.request(input);
    await broker.close();
    expect(await first).toMatchObject({ decision: 'deny', settlement: 'closed' });
    expect(await second).toMatchObject({ decision: 'deny', settlement: 'closed' });
    expect(await broker.request(input)).toMatchObject({ decision: 'deny', settlement: 'closed' });
    expect(broker.list()).toEqual([]);
    await broker.close();
  });

  it('denies requests beyond maxPending at once', async () => {
    await using broker = createApprovalBroker({ maxPending: 2, maxPendingPerTransport: 2 });
    void broker.request({ ...input, caller: 'a' });
    void broker.request({ ...input, caller: 'b' });
    expect(await broker.request({ ...input, caller: 'c' })).toMatchObject({ decision: 'deny', settlement: 'overflow' });
    expect(broker.list()).toHaveLength(2);
  });

  it('gives each caller (transport + caller) a share of the queue: the rest of its requests overflow, others still get in', async () => {
    await using broker = createApprovalBroker({ maxPending: 8 });
    // Default share: a quarter of maxPending.
    for (let i = 0; i < 2; i += 1) void broker.request(input);
    expect(await broker.request(input)).toMatchObject({ decision: 'deny', settlement: 'overflow' });
    expect(broker.open({ ...input, argsHash: 'h1' })).toMatchObject({ decision: 'deny', settlement: 'overflow' });
    // Same name over another transport, and another name, are other callers.
    void broker.request({ ...input, transport: 'mcp-stdio' });
    void broker.request({ ...input, caller: 'cursor' });
    expect(broker.list()).toHaveLength(4);
    await using explicit = createApprovalBroker({ maxPending: 8, maxPendingPerCaller: 3 });
    for (let i = 0; i < 3; i += 1) void explicit.request(input);
    expect(await explicit.request(input)).toMatchObject({ settlement: 'overflow' });
    // An answered request frees the share.
    explicit.resolve(explicit.list()[0]!.id, 'deny');
    void explicit.request(input);
    expect(explicit.list()).toHaveLength(3);
  });

  it("counts a call with a token's name against that token's share, whatever name the client reports", async () => {
    await using broker = createApprovalBroker({ maxPending: 8, maxPendingPerCaller: 2 });
    const alpha = { ...input, client: 'alpha' };
    // A client that changes its self-reported name on every call stays within its token's share.
    void broker.request({ ...alpha, caller: 'one' });
    void broker.request({ ...alpha, caller: 'two' });
    expect(await broker.request({ ...alpha, caller: 'three' })).toMatchObject({ decision: 'deny', settlement: 'overflow' });
    // Another token with the same self-reported name has its own share; so does a call without a token.
    void broker.request({ ...input, client: 'beta', caller: 'one' });
    void broker.request({ ...input, caller: 'alpha' });
    expect(broker.list().map((approval) => approval.client)).toEqual(['alpha', 'alpha', 'beta', undefined]);
  });

  it('answers a request only with the hash it was shown', async () => {
    await using broker = createApprovalBroker();
    const answer = broker.request({ ...input, argsHash: 'sha256:aaaa' });
    const [pending] = broker.list();
    expect(broker.answer(pending!.id, 'allow-once', { argsHash: 'sha256:bbbb' })).toBe('hash_mismatch');
    expect(broker.resolve(pending!.id, 'allow-once', { argsHash: 'sha256:bbbb' })).toBe(false);
    expect(broker.list()).toHaveLength(1);
    expect(broker.answer('nosuchid00', 'deny')).toBe('unknown');
    expect(broker.answer(pending!.id, 'allow-once', { argsHash: 'sha256:aaaa' })).toBe('answered');
    expect(await answer).toMatchObject({ decision: 'allow-once', settlement: 'answered' });
    // A request without a hash refuses any hash.
    void broker.request(input);
    expect(broker.answer(broker.list()[0]!.id, 'deny', { argsHash: 'sha256:aaaa' })).toBe('hash_mismatch');
  });

  it('keeps the answer to an opened request for one identical retry by the same caller', async () => {
    await using broker = createApprovalBroker();
    const asked = { ...input, argsHash: 'h' };
    const opened = broker.open(asked);
    expect(opened).toMatchObject({ id: expect.any(String), argsHash: 'h' });
    const id = (opened as { id: string }).id;
    // Still pending: the retry finds it, and opening again does not duplicate it.
    expect(broker.claim(asked)).toEqual({ pending: expect.objectContaining({ id }) });
    expect(broker.open(asked)).toMatchObject({ id });
    expect(broker.list()).toHaveLength(1);
    // Another caller or another hash does not see it.
    expect(broker.claim({ ...asked, caller: 'other' })).toBeUndefined();
    expect(broker.claim({ ...asked, argsHash: 'x' })).toBeUndefined();
    broker.resolve(id, 'allow-once');
    expect(broker.claim({ ...asked, caller: 'other' })).toBeUndefined();
    expect(broker.claim(asked)).toEqual({ answer: { id, decision: 'allow-once', settlement: 'answered' } });
    // Consumed: it runs once.
    expect(broker.claim(asked)).toBeUndefined();
    // A waiting retry joins the opened request instead of asking again.
    const again = broker.open(asked) as { id: string };
    const waiting = broker.request(asked);
    expect(broker.list()).toHaveLength(1);
    broker.resolve(again.id, 'deny');
    expect(await waiting).toEqual({ id: again.id, decision: 'deny', settlement: 'answered' });
    expect(broker.claim(asked)).toBeUndefined();
  });

  it('discards an answer kept for a retry once the policy revision changed (a switch to deny and back)', async () => {
    let revision = 'r1';
    await using broker = createApprovalBroker({ policyRevision: () => revision });
    const asked = { ...input, argsHash: 'h' };
    const { id } = broker.open(asked) as { id: string };
    broker.resolve(id, 'allow-once');
    revision = 'r2';
    expect(broker.claim(asked)).toBeUndefined();
    // Discarded, not kept for later: going back to the old revision does not revive it.
    revision = 'r1';
    expect(broker.claim(asked)).toBeUndefined();
    // Control: with no change between answer and retry, the answer applies.
    const again = broker.open(asked) as { id: string };
    broker.resolve(again.id, 'allow-once');
    expect(broker.claim(asked)).toEqual({ answer: { id: again.id, decision: 'allow-once', settlement: 'answered' } });
  });

  it('keeps an opened request pending when a joined waiter goes away, and drops kept answers after the timeout', async () => {
    await using broker = createApprovalBroker({ timeoutMs: 60 });
    const asked = { ...input, argsHash: 'h' };
    const { id } = broker.open(asked) as { id: string };
    const controller = new AbortController();
    const waiting = broker.request(asked, { signal: controller.signal });
    controller.abort(new Error('client timeout'));
    await expect(waiting).rejects.toThrow('client timeout');
    expect(broker.list().map((p) => p.id)).toEqual([id]);
    await new Promise((resolve) => setTimeout(resolve, 90));
    // Timed out with nobody waiting: the retry learns it timed out.
    expect(broker.claim(asked)).toEqual({ answer: { id, decision: 'deny', settlement: 'timeout' } });
    broker.open(asked);
    broker.resolve(broker.list()[0]!.id, 'allow-once');
    await new Promise((resolve) => setTimeout(resolve, 90));
    expect(broker.claim(asked)).toBeUndefined();
  });

  it('reads the wait mode on every call and reports the progress interval', async () => {
    let mode: string = 'return';
    await using broker = createApprovalBroker({ waitMode: () => mode as 'return', progressIntervalMs: 2_000 });
    expect(broker.waitMode()).toBe('return');
    mode = 'bogus';
    expect(broker.waitMode()).toBe('auto');
    expect(broker.progressIntervalMs).toBe(2_000);
    await using defaults = createApprovalBroker();
    expect(defaults.waitMode()).toBe('auto');
    expect(defaults.progressIntervalMs).toBe(5_000);
  });
});

describe('per-transport share', () => {
  it('one transport holds at most maxPendingPerTransport, whatever caller names it reports; other transports still get in', async () => {
    await using broker = createApprovalBroker({ maxPending: 8, maxPendingPerCaller: 2, maxPendingPerTransport: 4 });
    const answers = Array.from({ length: 6 }, (_, i) => broker.request({ ...input, transport: 'mcp-http', caller: `forged-${i}` }));
    await expect(answers[4]).resolves.toMatchObject({ decision: 'deny', settlement: 'overflow' });
    await expect(answers[5]).resolves.toMatchObject({ decision: 'deny', settlement: 'overflow' });
    expect(broker.list()).toHaveLength(4);
    void broker.request({ ...input, transport: 'mcp-stdio', caller: 'desktop' });
    expect(broker.list()).toHaveLength(5);
    await broker.close();
    for (const answer of answers.slice(0, 4)) await expect(answer).resolves.toMatchObject({ settlement: 'closed' });
  });

  it('lists an allowed answer kept for the retry until the retry takes it, with a retried event; denials are not listed', async () => {
    let clock = 1_000;
    await using broker = createApprovalBroker({ timeoutMs: 60_000, now: () => clock, holdMs: 10 });
    expect(broker.holdMs()).toBe(10);
    const events: ApprovalEvent['type'][] = [];
    broker.subscribe((event) => events.push(event.type));
    const opened = broker.open({ ...input, argsHash: 'sha256:aa' });
    if (!('createdAt' in opened)) throw new Error('not opened');
    clock = 2_000;
    broker.resolve(opened.id, 'allow-once');
    expect(broker.answered()).toEqual([expect.objectContaining({ id: opened.id, decision: 'allow-once', retryUntil: 62_000 })]);
    expect(broker.claim({ ...input, argsHash: 'sha256:aa' })).toMatchObject({ answer: { decision: 'allow-once' } });
    expect(broker.answered()).toEqual([]);
    expect(events).toEqual(['requested', 'resolved', 'retried']);
    const denied = broker.open({ ...input, argsHash: 'sha256:bb' });
    broker.resolve((denied as { id: string }).id, 'deny');
    expect(broker.answered()).toEqual([]);
  });
});
