import { randomBytes } from 'node:crypto';
import { rotateToken as rotateTokenFile } from '@capnode/mcp-server/node';
import { HostError } from './errors.js';
import { HOST_LOG_MAX_FILES, HOST_LOG_ROTATE_BYTES, type Host, type HostOptions } from './hostTypes.js';
import { closeHostParts, createBackgroundWork } from './internal/hostClose.js';
import { createHostCore } from './internal/hostCore.js';
import { createHostLogging } from './internal/hostLogging.js';
import { createHostServing } from './internal/hostServing.js';
import { assembleHostStatus, type HostStatusSources } from './internal/hostStatus.js';
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
  const started = Date.now();
  /** Tells this host's files (`host.json`, `run/*`) from another host's of the same process. */
  const instance = randomBytes(8).toString('hex');

  const core = createHostCore({ options, env, paths, logging, version, status: () => host.status() });
  const { settings, pipeline, plugins, imports, gateway, stopNotifier } = core;
  const { registry, approvals, invoker } = pipeline;
  const adminStreams = new AbortController();

  let closed = false;
  let closing: Promise<void> | undefined;
  const onAbort = () => void host.close();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const background = createBackgroundWork(log);
  // A settings.json still in an older form (`node`, now `gateway`) is rewritten once, under the settings lock; loading it warned.
  background.run(settings.migrate());

  const { dashboard, listener, http, stdio, liveSettings } = createHostServing({
    options,
    core,
    paths,
    env,
    logging,
    version,
    instance,
    started,
    closed: () => closed,
    host: () => host,
    announce,
    background,
    adminSignal: adminStreams.signal,
  });

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
