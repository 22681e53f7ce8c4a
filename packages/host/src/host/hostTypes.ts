import type { ApprovalBroker, Capability, Invoker, Registry } from '@capnode/capabilities';
import type { AuditLogOptions } from '../audit/audit.js';
import type { SettingsPatchResult } from '../config/settingsPatch.js';
import type { GatewayOverride } from '../parts/gateway/gatewayMode.js';
import type { OpenAgentOverride } from '../parts/openagent/openAgentPart.js';
import type { HostPaths } from '../config/paths.js';
import type { BuiltinPluginEntry } from '../parts/plugins/plugins.js';
import type { SettingsStore } from '../config/settings.js';
import type { HostLogLevel } from '../logging/logLevel.js';
import type { HostStatus } from '../status/hostStatus.js';

export type { HostLogLevel } from '../logging/logLevel.js';
export type { HostStatus, McpListenerState } from '../status/hostStatus.js';

export interface HostOptions {
  /** Config directory; default `CAPNODE_HOME`, else the platform default (see `resolveHome`). */
  readonly home?: string;
  /** Environment for `CAPNODE_HOME` and the platform default. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Address to bind for this run instead of `settings.mcp.host` (not persisted). */
  readonly host?: string;
  /** Port for this run instead of `settings.mcp.port` (not persisted); 0 picks a free one. */
  readonly port?: number;
  /** Register the built-in capabilities (device, system). Default true. */
  readonly builtins?: boolean;
  /** More capabilities to register (plugins, tests). */
  readonly capabilities?: readonly Capability[];
  /** How long an exec approval waits for an answer before it counts as denied. Default 120 s. */
  readonly approvalTimeoutMs?: number;
  /** Audit log rotation and queue (default 10 MiB × 5 files, 1 MiB queued); see {@link AuditLogOptions}. */
  readonly audit?: Omit<AuditLogOptions, 'path' | 'onError'>;
  /** How often a call waiting for approval reports progress, instead of `approvals.progressIntervalMs` (default 5 s). */
  readonly approvalProgressIntervalMs?: number;
  /** Version reported as MCP server info and in `host.json`. */
  readonly version?: string;
  /** Host log lines (approvals needed, errors; `debug` for listener chatter). Default: stderr, `debug` only with `CAPNODE_DEBUG` set. Never stdout (stdio mode). */
  readonly onLog?: (level: HostLogLevel, message: string) => void;
  /**
   * Connect to this OpenClaw gateway as a node for this run (not persisted), whatever `gateway.enabled`
   * says; the token defaults to `CAPNODE_GATEWAY_TOKEN`, then `gateway.token`.
   */
  readonly gateway?: GatewayOverride;
  /** OpenAgent's capability URL for this run (`capnode serve --openagent <url>`), instead of `openagent.url`; the `openagent.enabled` switch still decides. */
  readonly openagent?: OpenAgentOverride;
  /** Load the plugins listed in settings.json `plugins`. Default true. */
  readonly plugins?: boolean;
  /**
   * The plugins the host ships, loaded first: default the capability pack (`builtinPlugins` of
   * `@capnode/capabilities/pack`); `false` loads none.
   */
  readonly builtinPlugins?: readonly BuiltinPluginEntry[] | false;
  /** Plugin files to load last and reload whenever they change (`capnode serve --dev-plugin`). */
  readonly devPlugins?: readonly string[];
  /** How long a plugin may take to load before it counts as failed. Default 10 s. */
  readonly pluginLoadTimeoutMs?: number;
  /**
   * Probe each plugin command's availability at start (default true). `false` treats every command
   * as available: what `capnode --list-tools --markdown` documents, whatever this machine has.
   */
  readonly probeAvailability?: boolean;
  /** How long one command's availability probe may take before the command counts as unavailable. Default 5 s. */
  readonly availabilityTimeoutMs?: number;
  /**
   * Also append every log line (scrubbed, like `onLog`'s) to `<home>/logs/host.log`, rotated at
   * {@link HOST_LOG_ROTATE_BYTES} with {@link HOST_LOG_MAX_FILES} files kept; `debug` lines only with
   * `CAPNODE_DEBUG` set. Default true.
   */
  readonly logFile?: boolean;
  /**
   * Show the host's own desktop notification for each new pending approval (when settings.json
   * `approvals.notify` is on). Default true; the tray, which embeds the host and raises its own
   * actionable notification, passes false so a request is announced once.
   */
  readonly approvalNotifications?: boolean;
  /** Aborting closes the host. */
  readonly signal?: AbortSignal;
}

export { HOST_LOG_ROTATE_BYTES, HOST_LOG_MAX_FILES } from '../context/hostContext.js';


/** The capnode host service: the CLI runs it in the foreground, the tray will embed it. */
export interface Host {
  readonly paths: HostPaths;
  readonly registry: Registry;
  /** The single invocation pipeline (exec approvals and audit hooks installed). */
  readonly invoker: Invoker;
  /** Pending exec approvals; the admin route and the tray answer them. */
  readonly approvals: ApprovalBroker;
  readonly settings: SettingsStore;
  /**
   * Resolves once the imported MCP servers (`mcpClient.reexport`) have all connected or failed;
   * `start()` and `serveStdio()` never wait for them. Resolves at once when re-export is off.
   */
  importsReady(): Promise<void>;
  /** Resolves once every plugin has loaded or failed (`start()` and `serveStdio()` wait for it); never rejects. */
  pluginsReady(): Promise<void>;
  /**
   * Starts what settings.json enables, each on its own: the MCP HTTP listener unless `mcp.enabled`
   * is false (state `disabled`), and the gateway node when `gateway.enabled` or the `gateway` option is
   * set (it connects in the background; see `status().node`). Creates the token files on first start
   * and writes `host.json`. Without the listener, node mode opens a loopback listener for the admin
   * routes only, published in `run/node-<pid>.json`, so exec approvals can be answered. With
   * `mcpClient.reexport` on, also starts connecting the configured MCP servers in the background.
   * Takes the config directory's lock (`run/host.lock`) first: one started host per directory.
   * @throws HostError `listen_failed` (the status keeps the error), `invalid_settings` (node mode
   * without a gateway URL), `gateway_failed`, `locked` (another host holds the directory; the message
   * names its pid and URL), `insecure_file` (a symlinked or readable token file, a symlinked `run/`), `closed`.
   */
  start(): Promise<HostStatus>;
  /**
   * Serves MCP over stdin/stdout until stdin ends or `signal` aborts. Also opens a loopback listener
   * for the admin routes only (its MCP endpoint takes a random token nobody holds) and publishes it
   * in `run/stdio-<pid>.json`, so `capnode approvals` answers this host's exec approvals too.
   */
  serveStdio(options?: {
    readonly signal?: AbortSignal;
    /** How `tools/list` spells command names on this connection; `settings.mcp.toolNames` unless given. */
    readonly toolNames?: 'dotted' | 'underscore';
  }): Promise<void>;
  /** Writes a new MCP token (`default`); a running listener accepts only the new one afterwards. */
  rotateToken(): Promise<void>;
  /**
   * Rereads the client tokens (`mcp-token` as `default`, and `mcp-tokens.json`): a running listener
   * accepts exactly those from the next request on, so a revoked token gets 401 at once.
   */
  reloadTokens(): Promise<void>;
  status(): HostStatus;
  /**
   * A fresh one-time dashboard login URL (single use, valid 60 s) for a browser of this user.
   * @throws HostError `unavailable` when the dashboard is not listening.
   */
  dashboardLoginUrl(): string;
  /**
   * Validates a partial settings change against the whole schema and writes it; applies at once what
   * a running host can (`mcp.enabled` starts or stops the MCP listener, exec approvals, approval
   * waiting and notices); lists the rest as `restartNeeded`. Invalid input writes nothing and names
   * each field by path.
   */
  patchSettings(patch: unknown): Promise<SettingsPatchResult>;
  /** Stops the listener (draining in-flight requests), denies pending approvals, closes imported MCP servers (their processes end), removes `host.json` (when this instance wrote it), flushes the audit log, releases the lock. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}
