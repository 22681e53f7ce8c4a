import { randomBytes } from 'node:crypto';
import { rotateToken as rotateTokenFile } from '@capnode/mcp-server/node';
import { createLiveSettings } from './dashboard/settingsPatch.js';
import { HostError } from './errors.js';
import { HOST_LOG_MAX_FILES, HOST_LOG_ROTATE_BYTES, type Host, type HostOptions } from './hostTypes.js';
import { createControlSurfaces } from './internal/controlSurfaces.js';
import { closeHostParts, createBackgroundWork } from './internal/hostClose.js';
import { createHostCore } from './internal/hostCore.js';
import { createHostLogging } from './internal/hostLogging.js';
import { assembleHostStatus, type HostStatusSources } from './internal/hostStatus.js';
import { createHttpMode } from './internal/httpMode.js';
import { createListen, createMcpListener } from './internal/mcpListener.js';
import { createRuntimeFiles } from './internal/runtimeFiles.js';
import { createStdioMode } from './internal/stdioMode.js';
import { hostPaths, resolveHome } from './paths.js';

export type { HostLogLevel, HostOptions, McpListenerState, HostStatus, Host } from './hostTypes.js';

export { HOST_LOG_ROTATE_BYTES, HOST_LOG_MAX_FILES } from './hostTypes.js';

const DEFAULT_VERSION = '0.1.0';

/** Creates the host: loads settings (a bad file throws `HostError` `invalid_settings`), builds the registry and pipeline. Nothing listens until `start`. */
export function createHost(options: HostOptions = {}): Host {
  const env = options.env ?? process.env;
  const paths = hostPaths(resolveHome({ ...(options.home === undefined ? {} : { home: options.home }), env }));
  // Every line is scrubbed of the host's secrets (tokens, gateway token, imported servers' env/headers), then capped.
  const logging = createHostLogging({ paths, env, ...(options.onLog ? { onLog: options.onLog } : {}), logFile: options.logFile !== false, rotateBytes: HOST_LOG_ROTATE_BYTES, maxFiles: HOST_LOG_MAX_FILES });
  const { log, fileLog, knownSecrets } = logging;
  let announced = false;
  const announce = () => {
    announced = true;
  };
  const version = options.version ?? DEFAULT_VERSION;
  const serverInfo = { name: 'capnode', version };
  const started = Date.now();
  /** Tells this host's files (`host.json`, `run/*`) from another host's of the same process. */
  const instance = randomBytes(8).toString('hex');

  const core = createHostCore({ options, env, paths, logging, version, status: () => host.status() });
  const { settings, pipeline, plugins, imports, gateway, stopNotifier } = core;
  const { registry, approvals, invoker } = pipeline;
  const adminStreams = new AbortController();

  let closed = false;
  let closing: Promise<void> | undefined;
  const isClosed = () => closed;
  const onAbort = () => void host.close();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const background = createBackgroundWork(log);

  const { dashboard, adminHandler } = createControlSurfaces({ core, paths, env, version, log, signal: adminStreams.signal, host: () => host, restartNeeded: () => liveSettings.restartNeeded() });
  const runtime = createRuntimeFiles({ instance, started, version, dashboardUrl: () => dashboard.status().url, log });
  const listen = createListen({ invoker, settings, serverInfo, adminHandler, log });
  const listener = createMcpListener({ paths, settings, ...address(options), listen, knownSecrets, fileLog, closed: isClosed });
  const adminOnly = { paths, listen, runtime, knownSecrets, log };
  const http = createHttpMode({
    paths,
    settings,
    env,
    instance,
    version,
    ...address(options),
    ...(options.gateway === undefined ? {} : { gatewayOverride: options.gateway }),
    plugins,
    dashboard,
    gateway,
    imports,
    listener,
    runtime,
    adminOnly,
    log,
    fileLog,
    closed: isClosed,
    status: () => host.status(),
    announce,
    inBackground: (work) => background.run(work),
  });
  const stdio = createStdioMode({ paths, invoker, serverInfo, plugins, imports, dashboard, runtime, adminOnly, log, fileLog, announce });
  const liveSettings = createLiveSettings(settings, [
    { owns: (path) => path === 'mcp.enabled', apply: (next) => http.applyMcpEnabled(next.mcp.enabled) },
    { owns: (path) => path.startsWith('node.'), apply: (next) => http.applyNodeSettings(next) },
  ]);

  const statusSources: HostStatusSources = {
    version,
    started,
    paths,
    settings,
    registry,
    approvals,
    ...(options.gateway === undefined ? {} : { gatewayOverride: options.gateway }),
    listener,
    http,
    stdio,
    gateway,
    imports,
    audit: pipeline.audit,
    dashboard,
    plugins,
  };

  const host: Host = {
    paths,
    registry,
    invoker,
    approvals,
    settings,
    importsReady: () => imports.ready(),
    pluginsReady: () => plugins.ready(),
    start() {
      if (closed) return Promise.reject(new HostError('closed', 'the host is closed'));
      return http.start();
    },
    async serveStdio(stdioOptions = {}) {
      if (closed) throw new HostError('closed', 'the host is closed');
      await stdio.serve(stdioOptions);
    },
    async rotateToken() {
      const token = await rotateTokenFile(paths.mcpToken);
      knownSecrets.add(token);
      listener.server?.setToken(token);
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
    status: () => assembleHostStatus(statusSources),
    close() {
      closing ??= (async () => {
        closed = true;
        options.signal?.removeEventListener('abort', onAbort);
        await closeHostParts({
          abortInputs: () => {
            stdio.abort();
            adminStreams.abort();
          },
          dashboard,
          plugins,
          approvals,
          stopNotifier,
          closeListener: () => http.closeListener(),
          closeStdioAdmin: () => stdio.closeAdmin(),
          closeNodeAdmin: () => http.closeNodeAdmin(),
          background,
          gateway,
          imports,
          pipeline,
          releaseLock: () => http.releaseLock(),
          closeLog: () => {
            if (announced) fileLog('info', `capnode host stopped (pid ${process.pid})`);
            logging.close();
          },
        });
      })();
      return closing;
    },
    [Symbol.asyncDispose]: () => host.close(),
  };
  return host;
}

/** This run's address and port overrides, as option spreads. */
function address(options: HostOptions): { host?: string; port?: number } {
  return { ...(options.host === undefined ? {} : { host: options.host }), ...(options.port === undefined ? {} : { port: options.port }) };
}
