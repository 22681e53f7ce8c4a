import { createDashboardHandler } from './handler.js';
import { createBasePath } from './gate.js';
import { startDashboardListener, type DashboardListener } from './listener.js';
import { createDashboardSessions, type DashboardSessions } from './sessions.js';
import { findUiDirectory } from './static.js';
import type { DashboardHostView } from './types.js';
import type { DashboardState, DashboardStatus } from '../../status/hostStatus.js';

export type { DashboardState, DashboardStatus } from '../../status/hostStatus.js';


export interface DashboardServiceOptions {
  readonly view: DashboardHostView;
  /** Read at each start: `dashboard.enabled` and `dashboard.port` of the settings. */
  readonly config: () => { readonly enabled: boolean; readonly port: number };
  /** Where the built UI is; default: found beside the host bundle. */
  readonly uiDir?: string;
}

/** The host's dashboard: its listener, sessions and login codes. */
export interface DashboardService {
  /** Starts the listener unless disabled or already running; a failure is kept in the status and logged, never thrown. */
  start(): Promise<DashboardStatus>;
  status(): DashboardStatus;
  /** A fresh one-time login URL; throws when the dashboard is not listening. */
  loginUrl(): string;
  readonly sessions: DashboardSessions;
  /** Ends every session, closes the listener (draining). Idempotent; `start` works again afterwards. */
  close(): Promise<void>;
}

/** Creates the dashboard service of a host (nothing listens until `start`). */
export function createDashboardService(options: DashboardServiceOptions): DashboardService {
  const { view } = options;
  const sessions = createDashboardSessions();
  let listener: DashboardListener | undefined;
  let state: DashboardState = options.config().enabled ? 'stopped' : 'disabled';
  let error: string | undefined;
  let starting: Promise<DashboardStatus> | undefined;
  const uiDir = options.uiDir ?? findUiDirectory();
  // One per host instance: the cookie's Path, so another server on 127.0.0.1 never receives it.
  const basePath = createBasePath();
  const handle = createDashboardHandler({
    host: view,
    sessions,
    uiDir,
    basePath,
    gate: () => ({ origin: listener?.origin ?? '', hostHeader: listener?.hostHeader ?? '' }),
  });

  const status = (): DashboardStatus => ({
    state,
    ...(listener && state === 'listening' ? { url: `${listener.origin}/` } : {}),
    ...(error === undefined ? {} : { error }),
  });

  async function open(): Promise<DashboardStatus> {
    const config = options.config();
    if (!config.enabled) {
      state = 'disabled';
      return status();
    }
    state = 'starting';
    error = undefined;
    try {
      listener = await startDashboardListener({
        port: config.port,
        handle,
        onError: (cause) => view.log('error', `dashboard: ${(cause as Error)?.stack ?? String(cause)}`),
      });
    } catch (cause) {
      state = 'error';
      const code = (cause as NodeJS.ErrnoException).code;
      error = code === 'EADDRINUSE' ? `port ${config.port} is already in use — set dashboard.port to another port (0 picks a free one)` : `the dashboard could not start: ${(cause as Error).message}`;
      view.log('warning', error);
      return status();
    }
    state = 'listening';
    view.log('info', `dashboard on ${listener.origin}/ (open it with: capnode ui)${uiDir === undefined ? ' — its UI is not built' : ''}`);
    return status();
  }

  return {
    sessions,
    status,
    start() {
      if (listener) return Promise.resolve(status());
      starting ??= open().finally(() => {
        starting = undefined;
      });
      return starting;
    },
    loginUrl() {
      if (!listener || state !== 'listening') throw new Error(`the dashboard is not running (${state}${error ? `: ${error}` : ''})`);
      return `${listener.origin}/login?code=${sessions.mintCode()}`;
    },
    async close() {
      await starting;
      sessions.clear();
      const running = listener;
      listener = undefined;
      if (running) {
        await running.close();
        state = 'stopped';
      }
    },
  };
}
