import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openAgentArgumentsSha256 } from '@capnode/protocol/node';
import { startOpenAgentHost } from '../support/openAgentHost.js';
import { eventually } from '../support/poll.js';

describe('OpenAgent channel: idempotency ledger', () => {
  it('replays a mutating call resent after a reconnect: one line in the file, openagent/replayed', async () => {
    await using oa = await startOpenAgentHost();
    const file = join(oa.home, 'lines.txt');
    const call = await oa.bridge.call('oa.append', { file, line: 'once' });
    const first = await oa.bridge.result(call.call_id as string);
    expect(first).toMatchObject({ result: { content: [{ text: 'appended' }] } });
    oa.bridge.current()!.socket.terminate();
    await oa.bridge.hello(2);
    oa.bridge.send({ ...call });
    const replay = await eventually(() => oa.bridge.frames.find((entry) => entry.connection === 2 && entry.frame.type === 'client_tool_result' && entry.frame.call_id === call.call_id)?.frame, { what: 'the replay' });
    expect(replay).toMatchObject({ result: { content: [{ text: 'appended' }], _meta: { 'openagent/replayed': true, 'openagent/idempotent': true } } });
    expect(readFileSync(file, 'utf8')).toBe('once\n');
    expect(statSync(join(oa.home, 'openagent-ledger.jsonl')).mode & 0o777).toBe(0o600);
  });

  it('refuses the same key with other arguments, and a key whose call still runs', async () => {
    await using oa = await startOpenAgentHost();
    const file = join(oa.home, 'lines.txt');
    const call = await oa.bridge.call('oa.append', { file, line: 'a' });
    await oa.bridge.result(call.call_id as string);
    const args = { file, line: 'b' };
    const other = await oa.bridge.call('oa.append', args, { idempotency_key: call.idempotency_key, arguments_sha256: openAgentArgumentsSha256(args) });
    expect(await oa.bridge.result(other.call_id as string)).toMatchObject({ error: { code: 'idempotency_conflict', data: { idempotency_key: call.idempotency_key } } });
    const slowArgs = { file, line: 'slow', ms: 60_000 };
    const slow = await oa.bridge.call('oa.append', slowArgs);
    await eventually(() => oa.host.status().openagent.activeCalls === 1, { what: 'the slow call' });
    const again = await oa.bridge.call('oa.append', slowArgs, { idempotency_key: slow.idempotency_key });
    expect(await oa.bridge.result(again.call_id as string)).toMatchObject({ error: { code: 'idempotency_in_flight', data: { retry_after_ms: 1000 } } });
    expect(readFileSync(file, 'utf8')).toBe('a\n');
  });

  it('keeps read-only calls out of the ledger: a resent one runs again', async () => {
    await using oa = await startOpenAgentHost();
    const call = await oa.bridge.call('oa.echo', { text: 'again' });
    await oa.bridge.result(call.call_id as string);
    oa.bridge.send({ ...call, call_id: 'resent' });
    expect(await oa.bridge.result('resent')).toMatchObject({ result: { content: [{ text: 'again' }] } });
    expect(JSON.stringify(await oa.bridge.result('resent'))).not.toContain('openagent/replayed');
  });

  it('runs mutating calls one at a time, read-only ones side by side', async () => {
    await using oa = await startOpenAgentHost();
    const file = join(oa.home, 'lines.txt');
    const first = await oa.bridge.call('oa.append', { file, line: 'first', ms: 600 });
    const second = await oa.bridge.call('oa.append', { file, line: 'second', ms: 10 });
    const reader = await oa.bridge.call('oa.echo', { text: 'quick' });
    await oa.bridge.result(reader.call_id as string);
    expect(oa.bridge.framesOf('client_tool_result').some((frame) => frame.call_id === first.call_id)).toBe(false);
    await oa.bridge.result(second.call_id as string);
    expect(readFileSync(file, 'utf8')).toBe('first\nsecond\n');
  });
});
