import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import type { AsyncStack } from '@capnode/toolkit';
import type { AuditLogOptions } from '../audit/audit.js';
import { hostPaths, resolveHome, type HostPaths } from '../config/paths.js';
import { createSettingsStore, type SettingsStore } from '../config/settings.js';
import type { SettingsPatchResult } from '../config/settingsPatch.js';
import { configDirHostId } from '../config/hostId.js';
import { HostError } from '../errors.js';
import { ensurePrivateDirectory } from '../files/secureFile.js';
import type { HostLogLevel } from '../logging/logLevel.js';
import { createHostPipeline, type HostPipeline } from '../parts/pipeline/pipeline.js';
import type { HostStatus, PluginStatus } from '../status/hostStatus.js';
import { createHostLogging, type HostLogging } from './hostLogging.js';

/** Size at which `logs/host.log` is rotated. */
export const HOST_LOG_ROTATE_BYTES = 1024 * 1024;
/** Host log files kept: `host.log` and `host.log.1` … `host.log.4`. */
export const HOST_LOG_MAX_FILES = 5;

const DEFAULT_VERSION = '0.1.0';

export type HostEnv = Readonly<Record<string, string | undefined>>;

/** What every part of a host shares, made once by `createHost` before any part. */
export interface HostContext {
  readonly paths: HostPaths;
  readonly env: HostEnv;
  /** Reported as MCP server info and in the runtime files. */
  readonly version: string;
  /** Tells this host's files (`host.json`, `run/*`) from another host's of the same process. */
  readonly instance: string;
  /**
   * The config directory's stable id (`<home>/host-id`), declared as the `capnode/host` marker: the
   * same for every host of this directory, so none imports another, whichever started first.
   */
  readonly hostId: string;
  /** When the host was created (ms since the epoch). */
  readonly started: number;
  /** The host log: every line scrubbed of the host's secrets. */
  readonly logging: HostLogging;
  readonly settings: SettingsStore;
  /** settings.json did not exist when the host was created. */
  readonly firstRun: boolean;
  /** The one invocation pipeline (registry, approvals, invoker, audit). */
  readonly pipeline: HostPipeline;
  /** Aborted when the host starts closing: parts stop taking work and end their streams. */
  readonly signal: AbortSignal;
  /** The host logged that it started: it logs that it stopped when it closes. */
  announce(): void;
}

/**
 * A part of the host (plugins, imported servers, gateway node, listeners, dashboard…): created in
 * order onto the host's stack, started by the host's `start`, closed in reverse.
 */
export interface HostPart {
  close(): Promise<void>;
}

/** What the admin routes and the dashboard act on: the host's own operations, handed to them as a port. */
export interface HostControls {
  status(): HostStatus;
  rotateToken(): Promise<void>;
  /** Rereads the client tokens; a running listener accepts exactly those from then on. */
  reloadTokens(): Promise<void>;
  dashboardLoginUrl(): string;
  patchSettings(patch: unknown): Promise<SettingsPatchResult>;
  /** Setting paths changed since the host started that take effect only after a restart. */
  restartNeeded(): readonly string[];
  /** Loads and unloads plugins to match settings.json `plugins` as it is on disk now (`capnode plugins add|remove`). */
  syncPlugins(): Promise<readonly PluginStatus[]>;
}

/** The `HostOptions` the context reads. */
export interface HostContextOptions {
  readonly home?: string;
  readonly env?: HostEnv;
  readonly version?: string;
  readonly onLog?: (level: HostLogLevel, message: string) => void;
  readonly logFile?: boolean;
  readonly builtins?: boolean;
  readonly approvalTimeoutMs?: number;
  readonly approvalProgressIntervalMs?: number;
  readonly audit?: Omit<AuditLogOptions, 'path' | 'onError'>;
}

/** Creates the config directory and loads settings (a bad file throws `HostError` `invalid_settings`). */
function openSettings(paths: HostPaths, warn: (message: string) => void): { settings: SettingsStore; firstRun: boolean } {
  try {
    mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new HostError('io', `cannot create the config directory ${paths.home}: ${(error as Error).message}`, { cause: error });
  }
  ensurePrivateDirectory(paths.home, 'the config directory', warn);
  const firstRun = !existsSync(paths.settings);
  return { settings: createSettingsStore(paths.settings, { onWarning: warn }), firstRun };
}

/**
 * Makes the host's context: paths, the log (closed last, after the "stopped" line), settings (a bad
 * file throws `HostError` `invalid_settings`) and the pipeline (its audit log flushed on close).
 */
export function createHostContext(options: HostContextOptions, stack: AsyncStack, signal: AbortSignal): HostContext {
  const env = options.env ?? process.env;
  const paths = hostPaths(resolveHome({ ...(options.home === undefined ? {} : { home: options.home }), env }));
  // Every line is scrubbed of the host's secrets (tokens, gateway token, imported servers' env/headers), then capped.
  const logging = createHostLogging({ paths, env, ...(options.onLog ? { onLog: options.onLog } : {}), logFile: options.logFile !== false, rotateBytes: HOST_LOG_ROTATE_BYTES, maxFiles: HOST_LOG_MAX_FILES });
  let announced = false;
  stack.defer(() => {
    if (announced) logging.fileLog('info', `capnode host stopped (pid ${process.pid})`);
    logging.close();
  });
  const { settings, firstRun } = openSettings(paths, logging.warn);
  logging.scrubSettings(settings);
  const hostId = configDirHostId(paths.home, logging.warn);
  const pipeline = stack.use(
    createHostPipeline({
      paths,
      settings,
      log: logging.log,
      ...(options.builtins === undefined ? {} : { builtins: options.builtins }),
      ...(options.approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs: options.approvalTimeoutMs }),
      ...(options.approvalProgressIntervalMs === undefined ? {} : { approvalProgressIntervalMs: options.approvalProgressIntervalMs }),
      ...(options.audit === undefined ? {} : { audit: options.audit }),
    }),
  );
  return {
    paths,
    env,
    version: options.version ?? DEFAULT_VERSION,
    instance: randomBytes(8).toString('hex'),
    hostId,
    started: Date.now(),
    logging,
    settings,
    firstRun,
    pipeline,
    signal,
    announce: () => {
      announced = true;
    },
  };
}
