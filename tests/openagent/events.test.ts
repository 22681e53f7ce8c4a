import { describe, expect, it } from 'vitest';
import { buildOpenAgentCatalog } from '../../packages/host/src/parts/openagent/catalog.js';
import { createOpenAgentChannel } from '../../packages/host/src/parts/openagent/channel.js';
import { createEventQueue, MAX_PENDING_EVENTS, toOpenAgentEvent } from '../../packages/host/src/parts/openagent/events.js';
import { createRegistry } from '@capnode/capabilities';
import { startOpenAgentBridge } from '../support/openAgentBridge.js';
import { eventually } from '../support/poll.js';

const notice = (id: string) => ({ type: 'shell_completed' as const, sessionId: id, status: 'exited' as const, exitCode: 0, signal: null, stdoutBytes: 3, stderrBytes: 0, at: 1 });

describe('OpenAgent channel: shell_completed events', () => {
  it('keeps at most 1024, oldest dropped, and only an accepted ack of the current generation removes one', () => {
    const queue = createEventQueue();
    for (let index = 0; index < MAX_PENDING_EVENTS + 5; index += 1) queue.push(toOpenAgentEvent(notice(`s${index}`)));
    expect(queue.pending()).toHaveLength(MAX_PENDING_EVENTS);
    expect(queue.pending()[0]!.shell_id).toBe('s5');
    queue.ack({ generation: 1, shell_id: 's5', accepted: true }, 2);
    queue.ack({ generation: 2, shell_id: 's6', accepted: false }, 2);
    expect(queue.pending()).toHaveLength(MAX_PENDING_EVENTS);
    queue.ack({ generation: 2, shell_id: 's5', accepted: true }, 2);
    expect(queue.pending()[0]!.shell_id).toBe('s6');
  });

  it('sends client_tool_event after the ack, resends on heartbeats until acknowledged, and across a reconnect', async () => {
    await using bridge = await startOpenAgentBridge();
    const events = createEventQueue();
    const registry = createRegistry();
    const channel = createOpenAgentChannel(
      { url: bridge.url, headers: {}, deviceId: 'device-1', accountId: 'account-1', deviceLabel: 'box', heartbeatMs: 1000 },
      { instanceId: 'instance-1', generation: 1, catalog: () => buildOpenAgentCatalog({ registry, consent: () => ({}) as never, servers: 'all' }), runCall: async () => undefined, log: () => undefined, events },
    );
    try {
      events.push(toOpenAgentEvent(notice('shell-a')));
      await bridge.hello(1);
      const first = await eventually(() => bridge.framesOf('client_tool_event')[0], { what: 'the event' });
      expect(first).toEqual({ type: 'client_tool_event', generation: 1, event: { type: 'shell_completed', server: 'shell', shell_id: 'shell-a', status: 'exited', exit_code: 0, signal: null, stdout_bytes: 3, stderr_bytes: 0, at: 1 } });
      await eventually(() => bridge.framesOf('client_tool_event').length >= 2, { what: 'a resend on a heartbeat' });
      bridge.current()!.socket.terminate();
      await bridge.hello(2);
      await eventually(() => bridge.frames.some((entry) => entry.connection === 2 && entry.frame.type === 'client_tool_event'), { what: 'the resend after the reconnect' });
      bridge.send({ type: 'client_tool_event_ack', generation: 1, shell_id: 'shell-a', accepted: true, duplicate: true });
      await eventually(() => events.pending().length === 0, { what: 'the ack' });
      const count = bridge.framesOf('client_tool_event').length;
      await new Promise((resolve) => setTimeout(resolve, 2200));
      expect(bridge.framesOf('client_tool_event')).toHaveLength(count);
    } finally {
      await channel.close();
    }
  });
});
