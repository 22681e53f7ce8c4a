import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ApprovalBroker, Capability, Invoker, Registry } from '@capnode/capabilities';
import { generateToken, isInsecureTokenFileError, loadOrCreateToken, rotateToken as rotateTokenFile, startHttpServer, type McpHttpServer } from '@capnode/mcp-server/node';
import { createAdminHandler } from './adminApi.js';
import { createDashboardService, type DashboardStatus } from './dashboard/service.js';
import { createLiveSettings, type SettingsPatchResult } from './dashboard/settingsPatch.js';
import { describePending, startApprovalNotifier } from './internal/approvalNotices.js';
import { createAppCapability } from './appStatus.js';
import type { AuditLogOptions, AuditStats } from './audit.js';
import { createImportedTools, type ImportedToolsStatus } from './importedTools.js';
import { createGatewayMode, resolveGatewayConfig, type GatewayConnectionConfig, type GatewayOverride, type NodeModeStatus } from './gatewayMode.js';
import { HostError } from './errors.js';
import { acquireHostLock, type HostLock } from './hostLock.js';
import { createScrubbedLog, hostSecrets } from './internal/hostLog.js';
import { ensurePrivateDirectory } from './internal/secureFile.js';
import { createHostPipeline } from './pipeline.js';
import { writeFileAtomic } from './internal/atomicWrite.js';
import { HOME_ENV, hostPaths, resolveHome, type HostPaths, type RuntimeState } from './paths.js';
import { createSettingsStore, type Settings, type SettingsStore } from './settings.js';

export type HostLogLevel = 'debug' | 'info' | 'warning' | 'error';

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
   * Connect to this OpenClaw gateway as a node for this run (not persisted), whatever `node.enabled`
   * says; the token defaults to `CAPNODE_GATEWAY_TOKEN`, then `node.token`.
   */
  readonly gateway?: GatewayOverride;
  /** Aborting closes the host. */
  readonly signal?: AbortSignal;
}

export type McpListenerState = 'disabled' | 'stopped' | 'starting' | 'listening' | 'error';

/** The host's real state, as `app.status` and `capnode status` report it. */
export interface HostStatus {
  readonly version: string;
  readonly pid: number;
  readonly startedAt: string;
  readonly uptimeSeconds: number;
  readonly home: string;
  readonly settingsPath: string;
  readonly mcp: {
    readonly state: McpListenerState;
    /** The endpoint while listening. */
    readonly url?: string;
    /** Why the listener is not running, after a failed start. */
    readonly error?: string;
    readonly tokenPath: string;
    readonly inFlight?: number;
  };
  readonly stdio: {
    readonly state: 'stopped' | 'serving';
    /** Where `capnode approvals` reaches this stdio host (admin routes only, no MCP). */
    readonly adminUrl?: string;
  };
  readonly capabilities: { readonly commands: number; readonly categories: readonly string[] };
  readonly execApprovals: { readonly mode: string; readonly allowlist: number; readonly pending: number };
  /** Gateway node mode: the node connection's own state (`connected` only after the gateway's hello). */
  readonly node: NodeModeStatus;
  /** The gateway channel tools (`channel.enabled`), served by the local MCP server. */
  readonly channel: { readonly enabled: boolean };
  /** Where `capnode approvals` and `capnode gateway status` reach a host running without the MCP listener (node mode only). */
  readonly admin?: { readonly url: string };
  /** Tools imported from other MCP servers (`mcpClient` in settings.json) and each server's diagnostic. */
  readonly mcpClient: ImportedToolsStatus;
  /** The audit log: records written, dropped (stalled or full disk), waiting, rotations. */
  readonly audit: AuditStats & { readonly path: string };
  /** The web dashboard's own loopback listener (`dashboard` in settings.json; `capnode ui` opens it). */
  readonly dashboard: DashboardStatus;
}

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
  /**
   * Starts what settings.json enables, each on its own: the MCP HTTP listener unless `mcp.enabled`
   * is false (state `disabled`), and the gateway node when `node.enabled` or the `gateway` option is
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
  serveStdio(options?: { readonly signal?: AbortSignal }): Promise<void>;
  /** Writes a new MCP token; a running listener accepts only the new one afterwards. */
  rotateToken(): Promise<void>;
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

const DEFAULT_VERSION = '0.1.0';

function defaultLog(level: HostLogLevel, message: string): void {
  if (level === 'debug' && !process.env.CAPNODE_DEBUG) return;
  process.stderr.write(`capnode ${level}: ${message}\n`);
}

function describeListenError(error: unknown, host: string, port: number): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'EADDRINUSE') return `port ${port} on ${host} is already in use — is another capnode host running (capnode status)? Stop it, or pick another port: capnode serve --port ${port + 1}`;
  if (code === 'EACCES') return `not allowed to listen on ${host}:${port} — pick a port above 1024: capnode serve --port 8765`;
  if (code === 'EADDRNOTAVAIL') return `cannot bind ${host}: the address is not available on this machine — use 127.0.0.1`;
  return `the MCP listener could not start on ${host}:${port}: ${(error as Error)?.message ?? String(error)}`;
}

/** Writes a runtime file the CLI finds this host by; a failure is logged, not thrown (the host still serves). */
async function publishRuntime(path: string, runtime: RuntimeState, log: (level: 'warning', message: string) => void): Promise<void> {
  try {
    await writeFileAtomic(path, `${JSON.stringify(runtime, null, 2)}\n`);
  } catch (error) {
    log('warning', `cannot write ${path} (the CLI will not find this host): ${(error as Error).message}`);
  }
}

/** Removes a runtime file, but only the one this `instance` of this process wrote: another host of the process may have replaced it. */
function unpublishRuntime(path: string, instance: string): void {
  try {
    const runtime = JSON.parse(readFileSync(path, 'utf8')) as Partial<RuntimeState>;
    if (runtime.pid === process.pid && runtime.instance === instance) rmSync(path, { force: true });
  } catch {
    // Already gone.
  }
}

/** The MCP and admin bearer tokens, loaded or created; a HostError `insecure_file` or `io` says why not. */
async function loadListenerTokens(paths: HostPaths): Promise<{ token: string; adminToken: string }> {
  try {
    const token = (await loadOrCreateToken(paths.mcpToken)).token;
    const adminToken = (await loadOrCreateToken(paths.adminToken)).token;
    return { token, adminToken };
  } catch (error) {
    if (isInsecureTokenFileError(error)) throw new HostError('insecure_file', error.message, { cause: error });
    throw new HostError('io', `cannot read or create the token files in ${paths.home}: ${(error as Error).message}`, { cause: error });
  }
}

/** Creates the host: loads settings (a bad file throws `HostError` `invalid_settings`), builds the registry and pipeline. Nothing listens until `start`. */
export function createHost(options: HostOptions = {}): Host {
  const env = options.env ?? process.env;
  const paths = hostPaths(resolveHome({ ...(options.home === undefined ? {} : { home: options.home }), env }));
  const knownSecrets = new Set<string>();
  let settingsForLog: SettingsStore | undefined;
  // Every line is scrubbed of the host's secrets (tokens, gateway token, imported servers' env/headers), then capped.
  const log = createScrubbedLog(options.onLog ?? defaultLog, () => [...knownSecrets, ...(settingsForLog ? hostSecrets(settingsForLog.get(), env) : [])]);
  const version = options.version ?? DEFAULT_VERSION;
  const serverInfo = { name: 'capnode', version };
  const started = Date.now();
  /** Tells this host's files (`host.json`, `run/*`) from another host's of the same process. */
  const instance = randomBytes(8).toString('hex');
  const warn = (message: string) => log('warning', message);

  try {
    mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new HostError('io', `cannot create the config directory ${paths.home}: ${(error as Error).message}`, { cause: error });
  }
  ensurePrivateDirectory(paths.home, 'the config directory', warn);
  const firstRun = !existsSync(paths.settings);
  const settings = createSettingsStore(paths.settings, { onWarning: warn });
  settingsForLog = settings;

  const pipeline = createHostPipeline({
    paths,
    settings,
    log,
    ...(options.builtins === undefined ? {} : { builtins: options.builtins }),
    ...(options.approvalTimeoutMs === undefined ? {} : { approvalTimeoutMs: options.approvalTimeoutMs }),
    ...(options.approvalProgressIntervalMs === undefined ? {} : { approvalProgressIntervalMs: options.approvalProgressIntervalMs }),
    ...(options.audit === undefined ? {} : { audit: options.audit }),
  });
  const { registry, approvals, invoker } = pipeline;
  const stopNotifier = startApprovalNotifier({ broker: approvals, enabled: () => settings.get().approvals.notify, env, log });
  const adminStreams = new AbortController();
  const homeHint = env[HOME_ENV] ? `CAPNODE_HOME=${paths.home} ` : '';
  approvals.subscribe((event) => {
    if (event.type === 'requested') log('warning', describePending(event.approval, homeHint));
    else if (event.settlement !== 'answered') log('info', `approval ${event.approval.id} ${event.settlement === 'timeout' ? 'timed out (denied)' : `ended: ${event.settlement}`}`);
  });

  registry.register(createAppCapability(() => host.status()));
  for (const capability of options.capabilities ?? []) registry.register(capability);

  const imports = createImportedTools({ settings, invoker, approvals, log, version });
  const gateway = createGatewayMode({ paths, invoker, registry, version, log });
  let gatewayConfig: GatewayConnectionConfig | undefined;
  let nodeAdmin: McpHttpServer | undefined;
  const nodeRunFile = join(paths.runDir, `node-${process.pid}.json`);

  let state: McpListenerState = settings.get().mcp.enabled ? 'stopped' : 'disabled';
  let startError: string | undefined;
  let server: McpHttpServer | undefined;
  let starting: Promise<HostStatus> | undefined;
  let stdioServing = false;
  /** `start()` ran: from then on `mcp.enabled` starts and stops the listener live. */
  let httpStarted = false;
  let stdioAdmin: McpHttpServer | undefined;
  let closed = false;
  let closing: Promise<void> | undefined;
  let lock: HostLock | undefined;
  const stdioController = new AbortController();
  const onAbort = () => void host.close();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  const background = new Set<Promise<unknown>>();
  /** Runs `work` without waiting (a listener closing while it serves the request that closes it); `close` waits for it. */
  const inBackground = (work: Promise<unknown>): void => {
    const tracked = work.catch((error: unknown) => log('error', `${(error as Error)?.message ?? String(error)}`)).finally(() => background.delete(tracked));
    background.add(tracked);
  };
  const dashboard = createDashboardService({
    config: () => settings.get().dashboard,
    view: {
      version,
      paths,
      settings,
      approvals,
      firstRun,
      userHome: env.HOME || homedir(),
      env,
      signal: adminStreams.signal,
      // The pending count on its own, as every dashboard page shows it.
      status: () => ({ ...host.status(), pendingApprovals: approvals.list().length }),
      rotateToken: () => host.rotateToken(),
      patchSettings: (patch) => host.patchSettings(patch),
      restartNeeded: () => liveSettings.restartNeeded(),
      log,
    },
  });
  const dashboardUrl = (): { dashboardUrl?: string } => {
    const url = dashboard.status().url;
    return url === undefined ? {} : { dashboardUrl: url };
  };

  /** `mcp.enabled` changed on a running host: start the listener, or stop it and keep the admin routes on an admin-only one. */
  async function applyMcpEnabled(enabled: boolean): Promise<void> {
    // Before start (or in a stdio host) the setting simply applies when the listener starts.
    if (closed || !httpStarted) return;
    if (enabled && !server) {
      await startListener();
      const admin = nodeAdmin;
      nodeAdmin = undefined;
      if (admin) inBackground(admin.close().then(() => unpublish(nodeRunFile)));
    } else if (!enabled && server) {
      nodeAdmin ??= await openAdminOnly(nodeRunFile, 'node');
      const running = server;
      server = undefined;
      state = 'disabled';
      unpublish(paths.runtime);
      inBackground(running.close());
    }
  }

  /**
   * `node.*` changed on a running host: the node connection is closed and, when `node.enabled` with a
   * URL, opened again with the new URL and token. A `gateway` option of this run wins (nothing changes).
   */
  async function applyNodeSettings(next: Settings): Promise<void> {
    if (closed || !httpStarted || options.gateway?.url !== undefined) return;
    await gateway.stopNode();
    gatewayConfig = resolveGatewayConfig(next, undefined, env);
    if (gatewayConfig && next.node.enabled) {
      await gateway.start(gatewayConfig, { node: true, channel: false });
      log('info', `gateway node: connecting to ${gatewayConfig.url} (settings changed)`);
    }
  }

  const liveSettings = createLiveSettings(settings, [
    { owns: (path) => path === 'mcp.enabled', apply: (next) => applyMcpEnabled(next.mcp.enabled) },
    { owns: (path) => path.startsWith('node.'), apply: applyNodeSettings },
  ]);

  const publish = (path: string, runtime: RuntimeState): Promise<void> => publishRuntime(path, runtime, log);
  const unpublish = (path: string): void => unpublishRuntime(path, instance);

  /** A loopback listener for the admin routes only (its MCP endpoint takes a random token nobody holds), published in `runFile`. */
  async function openAdminOnly(runFile: string, kind: 'stdio' | 'node'): Promise<McpHttpServer | undefined> {
    let admin: McpHttpServer;
    try {
      const adminToken = (await loadOrCreateToken(paths.adminToken)).token;
      knownSecrets.add(adminToken);
      admin = await listen(0, '127.0.0.1', generateToken(), adminToken);
    } catch (error) {
      log('warning', `approvals listener failed (${(error as Error).message}); exec approvals of this ${kind} host cannot be answered and time out as denied`);
      return undefined;
    }
    const adminUrl = new URL('/_capnode/', admin.url).href;
    await publish(runFile, { pid: process.pid, instance, kind, adminUrl, startedAt: new Date(started).toISOString(), version, ...dashboardUrl() });
    if (kind === 'node') await lock?.update({ adminUrl });
    return admin;
  }

  async function listen(port: number, address: string, token: string, adminToken: string): Promise<McpHttpServer> {
    const current = settings.get().mcp;
    return startHttpServer({
      invoker,
      host: address,
      port,
      token,
      maxConcurrency: current.maxConcurrency,
      serverInfo,
      admin: { token: adminToken, handle: adminHandler },
      onLog: (level, message) => log(level === 'info' ? 'debug' : level, `mcp ${message}`),
    });
  }

  async function startAll(): Promise<HostStatus> {
    const current = settings.get();
    lock ??= acquireHostLock({ runDir: paths.runDir, home: paths.home, instance, address: `${options.host ?? current.mcp.host}:${options.port ?? current.mcp.port}`, onWarning: warn });
    gatewayConfig = resolveGatewayConfig(current, options.gateway, env);
    httpStarted = true;
    await dashboard.start();
    const nodeOn = gatewayConfig !== undefined && (options.gateway?.url !== undefined || current.node.enabled);
    const channelOn = gatewayConfig !== undefined && current.channel.enabled && current.mcp.enabled;
    if (gatewayConfig) await gateway.start(gatewayConfig, { node: nodeOn, channel: channelOn });
    if (current.mcp.enabled) return startListener();
    state = 'disabled';
    if (nodeOn && !nodeAdmin) {
      nodeAdmin = await openAdminOnly(nodeRunFile, 'node');
      if (closed) {
        await nodeAdmin?.close();
        nodeAdmin = undefined;
        unpublish(nodeRunFile);
      }
    }
    return host.status();
  }

  async function startListener(): Promise<HostStatus> {
    const mcp = settings.get().mcp;
    const address = options.host ?? mcp.host;
    const port = options.port ?? mcp.port;
    state = 'starting';
    startError = undefined;
    let token: string;
    let adminToken: string;
    try {
      ({ token, adminToken } = await loadListenerTokens(paths));
      knownSecrets.add(token).add(adminToken);
    } catch (error) {
      state = 'error';
      startError = (error as HostError).message;
      throw error;
    }
    try {
      server = await listen(port, address, token, adminToken);
    } catch (error) {
      state = 'error';
      startError = describeListenError(error, address, port);
      throw new HostError('listen_failed', startError, { cause: error });
    }
    if (closed) {
      await server.close();
      server = undefined;
      state = 'stopped';
      throw new HostError('closed', 'the host was closed while starting');
    }
    state = 'listening';
    imports.start();
    const adminUrl = new URL('/_capnode/', server.url).href;
    await lock?.update({ url: server.url, adminUrl });
    await publish(paths.runtime, { pid: process.pid, instance, kind: 'http', url: server.url, adminUrl, startedAt: new Date(started).toISOString(), version, ...dashboardUrl() });
    return host.status();
  }

  const adminHandler = createAdminHandler({
    broker: approvals,
    status: () => host.status(),
    rotateToken: () => host.rotateToken(),
    dashboardLogin: () => host.dashboardLoginUrl(),
    patchSettings: (patch) => host.patchSettings(patch),
    signal: adminStreams.signal,
  });

  const host: Host = {
    paths,
    registry,
    invoker,
    approvals,
    settings,
    importsReady: () => imports.ready(),
    start() {
      if (closed) return Promise.reject(new HostError('closed', 'the host is closed'));
      if (server || nodeAdmin) return Promise.resolve(host.status());
      starting ??= startAll().finally(() => {
        starting = undefined;
      });
      return starting;
    },
    async serveStdio(stdioOptions = {}) {
      if (closed) throw new HostError('closed', 'the host is closed');
      const { serveStdio } = await import('@capnode/mcp-server/stdio');
      const signal = stdioOptions.signal ? AbortSignal.any([stdioOptions.signal, stdioController.signal]) : stdioController.signal;
      stdioServing = true;
      imports.start();
      const runFile = join(paths.runDir, `stdio-${process.pid}.json`);
      try {
        await dashboard.start();
        stdioAdmin = await openAdminOnly(runFile, 'stdio');
        const connection = await serveStdio({ invoker, serverInfo, signal, onError: (error) => log('error', `stdio: ${error.message}`) });
        await connection.closed;
      } finally {
        stdioServing = false;
        const admin = stdioAdmin;
        stdioAdmin = undefined;
        await admin?.close();
        unpublish(runFile);
      }
    },
    async rotateToken() {
      const token = await rotateTokenFile(paths.mcpToken);
      knownSecrets.add(token);
      server?.setToken(token);
      log('info', `MCP token rotated (${paths.mcpToken}); clients need the new one`);
    },
    dashboardLoginUrl() {
      if (closed) throw new HostError('closed', 'the host is closed');
      try {
        return dashboard.loginUrl();
      } catch (error) {
        throw new HostError('unavailable', (error as Error).message, { cause: error });
      }
    },
    patchSettings(patch) {
      if (closed) return Promise.reject(new HostError('closed', 'the host is closed'));
      return liveSettings.patch(patch);
    },
    status() {
      const current = settings.get();
      const pending = approvals.list().length;
      return {
        version,
        pid: process.pid,
        startedAt: new Date(started).toISOString(),
        uptimeSeconds: Math.round((Date.now() - started) / 1000),
        home: paths.home,
        settingsPath: paths.settings,
        mcp: {
          state,
          ...(server && state === 'listening' ? { url: server.url, inFlight: server.inFlight } : {}),
          ...(startError === undefined ? {} : { error: startError }),
          tokenPath: paths.mcpToken,
        },
        stdio: stdioServing ? { state: 'serving', ...(stdioAdmin ? { adminUrl: new URL('/_capnode/', stdioAdmin.url).href } : {}) } : { state: 'stopped' },
        capabilities: {
          commands: registry.commands().length,
          categories: [...new Set(registry.commands().map((command) => command.category))],
        },
        execApprovals: { mode: current.execApprovals.mode, allowlist: current.execApprovals.allowlist.length, pending },
        node: gateway.status(options.gateway?.url !== undefined || current.node.enabled, gatewayConfig?.url ?? options.gateway?.url ?? current.node.url),
        channel: { enabled: current.channel.enabled },
        ...(nodeAdmin ? { admin: { url: new URL('/_capnode/', nodeAdmin.url).href } } : {}),
        mcpClient: imports.status(),
        audit: { path: pipeline.audit.path, ...pipeline.audit.stats() },
        dashboard: dashboard.status(),
      };
    },
    close() {
      closing ??= (async () => {
        closed = true;
        options.signal?.removeEventListener('abort', onAbort);
        stdioController.abort();
        adminStreams.abort();
        await dashboard.close();
        await approvals.close();
        await stopNotifier();
        if (server) {
          const running = server;
          server = undefined;
          await running.close();
          if (state === 'listening') state = 'stopped';
          unpublish(paths.runtime);
        }
        await stdioAdmin?.close();
        if (nodeAdmin) {
          await nodeAdmin.close();
          nodeAdmin = undefined;
          unpublish(nodeRunFile);
        }
        await Promise.allSettled([...background]);
        await gateway.close();
        await imports.close();
        await pipeline.close();
        lock?.release();
      })();
      return closing;
    },
    [Symbol.asyncDispose]: () => host.close(),
  };
  return host;
}
