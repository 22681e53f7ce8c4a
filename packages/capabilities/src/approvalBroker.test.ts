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
    await using broker = createApprovalBroker();
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
    await using broker = createApprovalBroker({ maxPending: 2 });
    void broker.request(input);
    void broker.request(input);
    expect(await broker.request(input)).toMatchObject({ decision: 'deny', settlement: 'overflow' });
    expect(broker.list()).toHaveLength(2);
  });
});
