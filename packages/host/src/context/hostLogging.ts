import type { HostLogLevel } from '../logging/logLevel.js';
import type { HostPaths } from '../config/paths.js';
import type { SettingsStore } from '../config/settings.js';
import { createLogScrubber, hostSecrets } from './hostLog.js';
import { createHostLogFile } from '../logging/hostLogFile.js';

export type HostLog = (level: HostLogLevel, message: string) => void;

export interface HostLoggingOptions {
  readonly paths: HostPaths;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where lines go besides the log file; default stderr. */
  readonly onLog?: HostLog;
  /** Append to `<home>/logs/host.log`. */
  readonly logFile: boolean;
  readonly rotateBytes: number;
  readonly maxFiles: number;
}

/** The host's log lines, every one scrubbed of the host's secrets and capped. */
export interface HostLogging {
  readonly log: HostLog;
  /** Lifecycle lines (started, stopped, failed to start) for the log file only: the CLI prints its own. */
  readonly fileLog: HostLog;
  readonly warn: (message: string) => void;
  /** The host's own tokens, scrubbed from every line; add each one the host reads or creates. */
  readonly knownSecrets: Set<string>;
  /** Also scrub the secrets of these settings (gateway token, imported servers' env and headers). */
  scrubSettings(settings: SettingsStore): void;
  /** Closes the log file. */
  close(): void;
}

function defaultLog(level: HostLogLevel, message: string): void {
  if (level === 'debug' && !process.env.CAPNODE_DEBUG) return;
  process.stderr.write(`capnode ${level}: ${message}\n`);
}

/** Builds the host log: `onLog` (default stderr) plus the rotated log file, both scrubbed. */
export function createHostLogging(options: HostLoggingOptions): HostLogging {
  const { env } = options;
  const knownSecrets = new Set<string>();
  let settingsForLog: SettingsStore | undefined;
  const sink = options.onLog ?? defaultLog;
  const logFile = options.logFile ? createHostLogFile(options.paths.hostLog, { rotateBytes: options.rotateBytes, maxFiles: options.maxFiles }) : undefined;
  const debugToFile = Boolean(env.CAPNODE_DEBUG);
  const tee = (level: HostLogLevel, message: string) => {
    if (logFile && (level !== 'debug' || debugToFile)) logFile.write(level, message);
    sink(level, message);
  };
  const secretsForLog = () => [...knownSecrets, ...(settingsForLog ? hostSecrets(settingsForLog.get(), env) : [])];
  // One scrubber for both: the secret list is compiled once per change, not once per sink.
  const scrub = createLogScrubber(secretsForLog);
  const log: HostLog = (level, message) => tee(level, scrub(message));
  return {
    log,
    fileLog: (level, message) => logFile?.write(level, scrub(message)),
    warn: (message) => log('warning', message),
    knownSecrets,
    scrubSettings(settings) {
      settingsForLog = settings;
    },
    close: () => logFile?.close(),
  };
}
