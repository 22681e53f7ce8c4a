import { randomBytes } from 'node:crypto';
import { CapabilityError } from '../../errors.js';
import { ShellSession, type ShellEnd, type ShellLaunch } from './shellSession.js';

/** The limits of one session manager. */
export interface ShellLimits {
  /** Running sessions one caller may have at once. */
  readonly maxSessionsPerCaller: number;
  /** Running sessions of all callers together. */
  readonly maxSessions: number;
  /** Bytes kept per stream (stdout, stderr) of each session; older output is dropped. */
  readonly maxOutputBytes: number;
  /** Ended sessions kept for reading; the oldest are forgotten first. */
  readonly maxEndedSessions: number;
  /** How long a host closing waits between SIGTERM and SIGKILL. */
  readonly closeGraceMs: number;
}

/** Called once a session ended, after its state says so. */
export type ShellEndListener = (session: ShellSession, end: ShellEnd) => void;

/** The sessions of one shell capability: started, looked up, listed, and all ended with the host. */
export interface ShellSessions {
  start(owner: string, launch: ShellLaunch, onEnd?: ShellEndListener): Promise<ShellSession>;
  /** @throws CapabilityError `invalid_arguments` naming the id when there is no such session. */
  get(id: string): ShellSession;
  list(): readonly ShellSession[];
  /**
   * Ends every running session (SIGTERM, SIGKILL after the grace), kills what ended sessions left
   * running in their process groups, and refuses new sessions; resolves when all have ended.
   */
  close(): Promise<void>;
}

function sessionId(): string {
  return `sh-${randomBytes(6).toString('hex')}`;
}

/**
 * Creates the session table. Running sessions count against their owner's and the overall limit;
 * ended ones stay readable until {@link ShellLimits.maxEndedSessions} newer ones ended. Once a session
 * started, a `process` exit listener kills the remaining process groups, so no program outlives
 * the host even when it exits without closing (nor what an ended session left running in its group).
 */
export function createShellSessions(limits: ShellLimits): ShellSessions {
  const sessions = new Map<string, ShellSession>();
  const endedOrder: string[] = [];
  let closed = false;
  const running = () => [...sessions.values()].filter((session) => !session.ended);
  const killAllNow = () => {
    for (const session of sessions.values()) session.killNow();
  };
  let exitHooked = false;
  const hookExit = (on: boolean) => {
    if (on === exitHooked) return;
    exitHooked = on;
    if (on) process.on('exit', killAllNow);
    else process.off('exit', killAllNow);
  };
  const ended = (session: ShellSession) => {
    endedOrder.push(session.id);
    while (endedOrder.length > limits.maxEndedSessions) sessions.delete(endedOrder.shift()!);
  };

  return {
    async start(owner, launch, onEnd) {
      if (closed) throw new CapabilityError('unavailable', 'Shell sessions are closed: the host is shutting down.');
      const live = running();
      const mine = live.filter((session) => session.owner === owner).length;
      if (mine >= limits.maxSessionsPerCaller) {
        throw new CapabilityError('busy', `This caller already has ${mine} running shell sessions (the limit is ${limits.maxSessionsPerCaller}); end one with shell.kill or wait for one to exit.`, {
          data: { limit: 'maxSessionsPerCaller', max: limits.maxSessionsPerCaller },
        });
      }
      if (live.length >= limits.maxSessions) {
        throw new CapabilityError('busy', `${live.length} shell sessions are running on this machine (the limit is ${limits.maxSessions}); end one with shell.kill first.`, {
          data: { limit: 'maxSessions', max: limits.maxSessions },
        });
      }
      const session = await ShellSession.start(sessionId(), owner, launch, limits.maxOutputBytes, (done, end) => {
        ended(done);
        try {
          onEnd?.(done, end);
        } catch {
          // A listener's fault (a closed connection) must not disturb the session table.
        }
      });
      sessions.set(session.id, session);
      if (closed) session.killNow();
      else hookExit(true);
      return session;
    },
    get(id) {
      const session = sessions.get(id);
      if (!session) throw new CapabilityError('invalid_arguments', `No shell session '${id}' (it never existed, or it ended long enough ago to be forgotten); shell.list shows the sessions.`, { data: { reason: 'unknown_session' } });
      return session;
    },
    list: () => [...sessions.values()],
    async close() {
      closed = true;
      for (const session of sessions.values()) if (session.ended) session.killNow();
      await Promise.all(running().map((session) => session.kill('SIGTERM', limits.closeGraceMs, 'cancelled')));
      hookExit(false);
    },
  };
}
