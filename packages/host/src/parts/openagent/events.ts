import type { ClientEvent } from '@capnode/capabilities';
/** Most `shell_completed` events kept until the server acknowledges them (desktop `MAX_PENDING_TOOL_EVENTS`); the oldest go first. */
export const MAX_PENDING_EVENTS = 1024;

/** A `client_tool_event` payload: a background shell session the server started has ended. */
export interface OpenAgentShellCompleted {
  readonly type: 'shell_completed';
  readonly server: 'shell';
  readonly shell_id: string;
  readonly status: 'exited' | 'completed' | 'timed_out' | 'timeout' | 'killed' | 'cancelled';
  readonly exit_code: number | null;
  readonly signal?: string | null;
  readonly stdout_bytes?: number;
  readonly stderr_bytes?: number;
  readonly at?: number;
}

/** The OpenAgent form of a shell session's end. */
export function toOpenAgentEvent(notice: ClientEvent): OpenAgentShellCompleted {
  return {
    type: 'shell_completed',
    server: 'shell',
    shell_id: notice.sessionId,
    status: notice.status,
    exit_code: notice.exitCode,
    signal: notice.signal,
    stdout_bytes: notice.stdoutBytes,
    stderr_bytes: notice.stderrBytes,
    at: notice.at,
  };
}

/** Events waiting for the server's acknowledgement: sent when they arrive, resent on every heartbeat, dropped on an accepted ack of the current generation. */
export interface EventQueue {
  /** Keeps `event` (replacing one for the same shell) and tells the listener to send it. */
  push(event: OpenAgentShellCompleted): void;
  pending(): readonly OpenAgentShellCompleted[];
  /** A `client_tool_event_ack`: only an accepted ack of `current` generation removes the event (a stale one must not). */
  ack(frame: { readonly generation: number; readonly shell_id: string; readonly accepted: boolean }, current: number): void;
  /** Called after a push. */
  onPush?: (() => void) | undefined;
}

export function createEventQueue(): EventQueue {
  const events = new Map<string, OpenAgentShellCompleted>();
  const queue: EventQueue = {
    push(event) {
      const key = `shell_completed:${event.shell_id}`;
      events.delete(key);
      events.set(key, event);
      while (events.size > MAX_PENDING_EVENTS) events.delete(events.keys().next().value as string);
      queue.onPush?.();
    },
    pending: () => [...events.values()],
    ack(frame, current) {
      if (frame.generation === current && frame.accepted) events.delete(`shell_completed:${frame.shell_id}`);
    },
  };
  return queue;
}
