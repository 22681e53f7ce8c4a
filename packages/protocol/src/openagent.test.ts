import { describe, expect, it } from 'vitest';
import { openAgentArgumentsSha256 } from './node.js';
import {
  admitOpenAgentCall,
  classifyOpenAgentCall,
  openAgentDeadline,
  parseOpenAgentServerFrame,
  type OpenAgentAdmissionState,
  type OpenAgentToolCall,
} from './openagent.js';

const HASH = openAgentArgumentsSha256({ command: ['echo', 'hi'] });
const CALL: OpenAgentToolCall = {
  type: 'client_tool_call',
  call_id: 'c1',
  generation: 1,
  server: 'capnode',
  tool: 'system.run',
  args: { command: ['echo', 'hi'] },
  deadline_ms: 30_000,
  session_id: null,
  account_id: 'acct',
  idempotency_key: 'c1',
  arguments_sha256: HASH,
};

const STATE: OpenAgentAdmissionState = { acknowledged: true, accountId: 'acct', generation: 1, active: new Set(), hash: openAgentArgumentsSha256 };

describe('parseOpenAgentServerFrame', () => {
  it('accepts the server frames', () => {
    expect(parseOpenAgentServerFrame(JSON.stringify(CALL))).toEqual({ ok: true, frame: CALL });
    for (const frame of [
      { type: 'capability_hello_ack', protocol: 'client-capabilities/1', device_id: 'd', account_id: 'a', client_instance_id: 'i', generation: 1, accepted: true },
      { type: 'capability_heartbeat_ack', generation: 2, ts_ms: 5 },
      { type: 'client_tool_cancel', call_id: 'c', generation: 1, reason: 'server_cancelled' },
      { type: 'client_tool_event_ack', generation: 1, shell_id: 's', accepted: true, duplicate: true },
      { type: 'pong' },
      { type: 'error', error: { code: 'X', message: 'y' } },
    ]) {
      expect(parseOpenAgentServerFrame(JSON.stringify(frame)).ok).toBe(true);
    }
  });

  it('names invalid_json, invalid_frame and unknown_frame', () => {
    expect(parseOpenAgentServerFrame('{')).toMatchObject({ ok: false, code: 'invalid_json' });
    expect(parseOpenAgentServerFrame('[1]')).toMatchObject({ ok: false, code: 'invalid_frame' });
    expect(parseOpenAgentServerFrame('{"call_id":"x"}')).toMatchObject({ ok: false, code: 'invalid_frame', callId: 'x' });
    expect(parseOpenAgentServerFrame('{"type":"nope"}')).toMatchObject({ ok: false, code: 'unknown_frame' });
    expect(parseOpenAgentServerFrame('{"type":"__proto__"}')).toMatchObject({ ok: false, code: 'unknown_frame' });
    const bad: readonly [Record<string, unknown>, string][] = [
      [{ generation: 0 }, 'generation'],
      [{ generation: 1.5 }, 'generation'],
      [{ call_id: '' }, 'call_id'],
      [{ arguments_sha256: HASH.toUpperCase() }, 'arguments_sha256'],
      [{ args: [] }, 'args'],
      [{ deadline_ms: null }, 'deadline_ms'],
      [{ tool: 3 }, 'tool'],
    ];
    for (const [change, field] of bad) {
      const parsed = parseOpenAgentServerFrame(JSON.stringify({ ...CALL, ...change }));
      expect(parsed).toMatchObject({ ok: false, code: 'invalid_frame' });
      expect(parsed.ok ? '' : parsed.message).toContain(field);
    }
  });
});

describe('admitOpenAgentCall', () => {
  it('admits a good call and refuses in the desktop order', () => {
    expect(admitOpenAgentCall(CALL, STATE)).toBeUndefined();
    const everythingWrong = { ...CALL, account_id: 'other', network_id: 'n2', generation: 7, arguments_sha256: '0'.repeat(64) };
    const busy = new Set(Array.from({ length: 32 }, (_, index) => `x${index}`).concat('c1'));
    const steps: [Partial<OpenAgentAdmissionState>, string][] = [
      [{ acknowledged: false }, 'not_registered'],
      [{}, 'account_mismatch'],
    ];
    for (const [change, code] of steps) expect(admitOpenAgentCall(everythingWrong, { ...STATE, active: busy, ...change })?.error.code).toBe(code);
    expect(admitOpenAgentCall(everythingWrong, { ...STATE, active: busy })?.close).toBe(true);
    expect(admitOpenAgentCall({ ...everythingWrong, account_id: 'acct' }, { ...STATE, active: busy, networkId: 'n1' })).toMatchObject({ close: false, error: { code: 'network_mismatch' } });
    expect(admitOpenAgentCall({ ...everythingWrong, account_id: 'acct', network_id: 'n1' }, { ...STATE, active: busy, networkId: 'n1' })?.error.code).toBe('stale_generation');
    expect(admitOpenAgentCall({ ...CALL, arguments_sha256: '0'.repeat(64) }, { ...STATE, active: busy })?.error.code).toBe('duplicate_call');
    expect(admitOpenAgentCall({ ...CALL, call_id: 'new', arguments_sha256: '0'.repeat(64) }, { ...STATE, active: busy })?.error.code).toBe('client_backpressure');
    expect(admitOpenAgentCall({ ...CALL, arguments_sha256: '0'.repeat(64) }, { ...STATE, active: new Set(Array.from({ length: 31 }, (_, index) => `x${index}`)) })).toEqual({
      close: false,
      error: { code: 'arguments_hash_mismatch', message: expect.any(String), data: { expected: '0'.repeat(64), actual: HASH } },
    });
  });
});

describe('classifyOpenAgentCall and openAgentDeadline', () => {
  it('defaults to mutating and lets argument matches decide, most restrictive first', () => {
    expect(classifyOpenAgentCall({}, {})).toBe('mutating');
    const tool = { classification: 'mutating' as const, classification_by_argument: { mode: { read: 'read_only' as const, write: 'mutating' as const }, kind: { stat: 'idempotent' as const } } };
    expect(classifyOpenAgentCall(tool, { mode: 'read' })).toBe('read_only');
    expect(classifyOpenAgentCall(tool, { mode: 'read', kind: 'stat' })).toBe('idempotent');
    expect(classifyOpenAgentCall(tool, { mode: 'other' })).toBe('mutating');
  });

  it('reads absolute and relative deadlines and clamps them', () => {
    const now = 1_700_000_000_000;
    expect(openAgentDeadline(now + 5000, now)).toBe(now + 5000);
    expect(openAgentDeadline(5000, now)).toBe(now + 5000);
    expect(openAgentDeadline(-5, now)).toBe(now + 1);
    expect(openAgentDeadline(now - 5, now)).toBe(now + 1);
    expect(openAgentDeadline(1e11, now)).toBe(now + 86_400_000);
  });
});
