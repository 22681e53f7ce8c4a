import type { ApprovalBroker } from '@capnode/capabilities';
import type { LogLevel } from '@capnode/toolkit';
import type { ControlAudit } from '../../audit/controlAudit.js';
import type { HostPaths } from '../../config/paths.js';
import type { DashboardStatusView } from './apiTypes.js';
import type { SettingsStore } from '../../config/settings.js';
import type { DashboardSession, DashboardSessions } from './sessions.js';
import type { SettingsPatchResult } from '../../config/settingsPatch.js';

/** What the dashboard reads and drives of its host (the host builds it; no import of host.ts here). */
export interface DashboardHostView {
  readonly version: string;
  readonly paths: HostPaths;
  readonly settings: SettingsStore;
  readonly approvals: ApprovalBroker;
  /** The host status, as `GET /_capnode/status` gives it, plus `pendingApprovals` (the count). */
  status(): DashboardStatusView;
  rotateToken(): Promise<void>;
  /** Rereads the client tokens after the dashboard made one (Connect a client). */
  reloadTokens(): Promise<void>;
  /** Validates and writes a partial settings change, then applies what can be applied live. */
  patchSettings(patch: unknown): Promise<SettingsPatchResult>;
  /** Setting paths changed since this host started that take effect only after a restart. */
  restartNeeded(): readonly string[];
  /** The user's home directory (where client configs are looked for). */
  readonly userHome: string;
  /** The host's environment (`${VAR}` references in imported client configs). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** True when no `settings.json` existed before this host started. */
  readonly firstRun: boolean;
  /** Aborted when the host closes: ends event streams. */
  readonly signal: AbortSignal;
  log(level: LogLevel, message: string): void;
  /** Adds a control record to `audit.log` (transport `dashboard`): a settings change, a token rotation, a sign-in. */
  audit: ControlAudit;
}

/** One routed API request. */
export interface RouteContext {
  readonly request: Request;
  readonly session: DashboardSession;
  /** The session store (sign-out ends `session` there). */
  readonly sessions: DashboardSessions;
  /** Path parameters, decoded. */
  readonly params: Readonly<Record<string, string>>;
  readonly url: URL;
  readonly signal: AbortSignal;
  readonly host: DashboardHostView;
  /** The dashboard's secret base path, `/d/<random>` (the session cookie's Path, with a trailing slash). */
  readonly basePath: string;
}

export type RouteHandler = (context: RouteContext) => Response | Promise<Response>;

/** `[method, path pattern with :params, handler]`. */
export type Route = readonly [method: string, pattern: string, handler: RouteHandler];
