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

  it('refuses an answer whose argument hash is not the pending request’s', async () => {
    await using broker = createApprovalBroker();
    const handle = createAdminHandler({ broker, status: () => ({}), rotateToken: async () => {} });
    const answer = broker.request({ command: 'system.run', commandLine: 'ls', argsHash: 'sha256:aaaa' });
    const id = broker.list()[0]!.id;
    const post = (body: unknown) => handle(new Request(`${base}approvals`, { method: 'POST', body: JSON.stringify(body) }));
    const refused = await post({ id, decision: 'allow-once', argsHash: 'sha256:bbbb' });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: string }).error).toContain('nothing was answered');
    expect((await post({ id, decision: 'allow-once', argsHash: 7 })).status).toBe(400);
    expect(broker.list()).toHaveLength(1);
    expect((await post({ id, decision: 'allow-once', argsHash: 'sha256:aaaa' })).status).toBe(200);
    await expect(answer).resolves.toMatchObject({ decision: 'allow-once' });
  });

  it('streams approval events: a snapshot, then requested and resolved; the host closing ends the stream', async () => {
    await using broker = createApprovalBroker();
    const closing = new AbortController();
    const handle = createAdminHandler({ broker, status: () => ({}), rotateToken: async () => {}, signal: closing.signal });
    void broker.request({ command: 'system.run', commandLine: 'first' });
    const response = await handle(new Request(`${base}approvals/events`));
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect((await handle(new Request(`${base}approvals/events`, { method: 'POST' }))).status).toBe(405);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readUntil = async (pattern: RegExp) => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
      return text;
    };
    expect(await readUntil(/event: snapshot\ndata: .*first/)).toContain('"commandLine":"first"');
    void broker.request({ command: 'system.run', commandLine: 'second' });
    await readUntil(/event: requested\ndata: .*second/);
    broker.resolve(broker.list()[1]!.id, 'deny');
    await readUntil(/event: resolved\ndata: .*"decision":"deny"/);
    closing.abort();
    await readUntil(/$^/);
    expect((await reader.read()).done).toBe(true);
  });
});
