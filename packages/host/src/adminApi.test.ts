import { createApprovalBroker } from '@capnode/capabilities';
import { describe, expect, it } from 'vitest';
import { createAdminHandler } from './adminApi.js';

const base = 'http://127.0.0.1:1/_capnode/';

describe('admin routes', () => {
  it('lists and answers pending approvals', async () => {
    await using broker = createApprovalBroker();
    let rotated = 0;
    const handle = createAdminHandler({ broker, status: () => ({ ok: 1 }), rotateToken: async () => void rotated++ });
    const answer = broker.request({ command: 'system.run', commandLine: 'echo hi' });
    const listed = (await (await handle(new Request(`${base}approvals`))).json()) as { approvals: { id: string; commandLine: string }[] };
    expect(listed.approvals).toHaveLength(1);
    expect(listed.approvals[0]!.commandLine).toBe('echo hi');
    const id = listed.approvals[0]!.id;

    const post = (body: unknown) => handle(new Request(`${base}approvals`, { method: 'POST', body: JSON.stringify(body) }));
    expect((await post({ id, decision: 'maybe' })).status).toBe(400);
    expect((await post({ decision: 'deny' })).status).toBe(400);
    expect((await post({ id: 'nope', decision: 'deny' })).status).toBe(404);
    expect((await post({ id, decision: 'allow-once' })).status).toBe(200);
    await expect(answer).resolves.toMatchObject({ decision: 'allow-once', settlement: 'answered' });
    expect((await post({ id, decision: 'deny' })).status).toBe(404);

    expect((await handle(new Request(`${base}status`))).status).toBe(200);
    expect((await handle(new Request(`${base}token/rotate`, { method: 'POST' }))).status).toBe(200);
    expect(rotated).toBe(1);
    expect((await handle(new Request(`${base}elsewhere`))).status).toBe(404);
    expect((await handle(new Request(`${base}approvals`, { method: 'DELETE' }))).status).toBe(405);
  });
});
