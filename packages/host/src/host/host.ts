import { rotateToken as rotateTokenFile } from '@capnode/mcp-server/node';
import { createTokenUsageRecorder, readAcceptedTokens } from '../config/clientTokens.js';
import { createAsyncStack } from '@capnode/toolkit';
import { createRuntimeFiles } from '../config/runtimeFiles.js';
import { loadSettings } from '../config/settings.js';
import { hostSelfIdentity } from '../config/selfIdentity.js';
import { createLiveSettings, type LiveSettings } from '../config/settingsPatch.js';
import { createBackgroundWork } from '../context/backgroundWork.js';
import { createHostContext, type HostContext, type HostControls } from '../context/hostContext.js';
import { HostError } from '../errors.js';
import { createAdminPart } from '../parts/admin/adminPart.js';
import { createBrowserControlPart } from '../parts/browser/browserPart.js';
import { createDashboardPart } from '../parts/dashboard/dashboardPart.js';
import { createGatewayMode } from '../parts/gateway/gatewayMode.js';
import { createGatewayPublications } from '../parts/gateway/gatewayPublications.js';
import { createImportedTools } from '../parts/imports/importedTools.js';
import { createHttpMode } from '../parts/listener/httpMode.js';
import { createLockHolder } from '../parts/listener/lockHolder.js';
import { createListen } from '../parts/listener/mcpListener.js';
import { createOpenAgentPart } from '../parts/openagent/openAgentPart.js';
import { createAppCapability } from '../parts/app/appCapability.js';
import { hostSecrets } from '../context/hostLog.js';
import { resolveGatewayConfig } from '../parts/gateway/gatewayMode.js';
import { createApprovalsPart } from '../parts/approvals/approvalsPart.js';
import { createPluginsPart } from '../parts/plugins/pluginsPart.js';
import { createStdioMode } from '../parts/stdio/stdioMode.js';
import type { Host, HostOptions } from './hostTypes.js';
import { assembleHostStatus } from './statusAssembly.js';

export type { HostLogLevel, HostOptions, McpListenerState, HostStatus, Host } from './hostTypes.js';

export { HOST_LOG_ROTATE_BYTES, HOST_LOG_MAX_FILES } from './hostTypes.js';

const closedError = (when = 'is closed') => new HostError('closed', `the host ${when}`);

/**
 * Builds the parts in order onto `stack`, each handed the context and the ports it uses: closing
 * unwinds them in reverse, so what takes work (approvals, listeners, dashboard) stops before what
 * work in flight needs (plugins, gateway node, imported servers), and the audit log, the lock and
 * the log close last.
 */
function buildParts(options: HostOptions, context: HostContext, stack: ReturnType<typeof createAsyncStack>, controls: HostControls) {
  const { registry } = context.pipeline;
  const lock = stack.use(createLockHolder(context));
  // The app.* commands reach the parts built below through these ports, only when called.
  let httpPart: ReturnType<typeof createHttpMode> | undefined;
  registry.register(
    createAppCapability({
      paths: context.paths,
      settings: context.settings,
      approvals: context.pipeline.approvals,
      env: context.env,
      version: context.version,
      status: () => controls.status(),
      patchSettings: (patch) => controls.patchSettings(patch),
      restartNeeded: () => controls.restartNeeded(),
      reconnectGateway: async () => (httpPart ? httpPart.reconnectGateway() : false),
      gatewayConfig: () => {
        if (httpPart?.gatewayConfig) return httpPart.gatewayConfig;
        const current = context.settings.reload();
        if (current.gateway.url === undefined) return undefined;
        return resolveGatewayConfig({ ...current, gateway: { ...current.gateway, enabled: true } }, options.gateway, context.env);
      },
      secrets: () => [...context.logging.knownSecrets, ...hostSecrets(context.settings.get(), context.env)],
    }),
  );
  for (const capability of options.capabilities ?? []) registry.register(capability);
  const { settings, pipeline, version } = context;
  const { log } = context.logging;
  const identity = hostSelfIdentity(context.paths, () => settings.get().mcp.port, options.port === undefined ? [] : [options.port]);
  const imports = stack.use(createImportedTools({ settings, invoker: pipeline.invoker, approvals: pipeline.approvals, log, version, instance: context.hostId, identity }));
  const publications = createGatewayPublications({ settings, registry, imports });
  stack.defer(() => publications.close());
  const gateway = stack.use(createGatewayMode({ paths: context.paths, invoker: pipeline.invoker, registry, version, log, publications }));
  const plugins = stack.use(createPluginsPart(context, options, { gatewayCanvasUrl: { current: () => gateway.surfaceUrl('canvas'), fresh: (surfaceOptions) => gateway.freshSurfaceUrl('canvas', surfaceOptions) } }));
  const browserControl = stack.use(createBrowserControlPart(context));
  const openagent = stack.use(createOpenAgentPart(context, { ...(options.openagent === undefined ? {} : { override: options.openagent }), imports }));
  const background = stack.use(createBackgroundWork(log));
  // A settings.json still in an older form (`node`, now `gateway`) is rewritten once, under the settings lock; loading it warned.
  background.run(settings.migrate());
  const dashboard = stack.use(createDashboardPart(context, controls));
  // Closed after the listeners (the stack unwinds in reverse): the uses still waiting for their minute are written.
  const tokenUse = createTokenUsageRecorder(context.paths, (message) => log('warning', message));
  stack.defer(() => tokenUse.close());
  const listen = createListen(context, createAdminPart(context, controls), tokenUse);
  const runtime = createRuntimeFiles({ instance: context.instance, started: context.started, version, dashboardUrl: () => dashboard.status().url, log });
  const http = stack.use(
    createHttpMode({
      context,
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.port === undefined ? {} : { port: options.port }),
      ...(options.gateway === undefined ? {} : { gatewayOverride: options.gateway }),
      plugins,
      dashboard,
      gateway,
      openagent,
      imports,
      listen,
      runtime,
      lock,
      status: () => controls.status(),
      inBackground: (work) => background.run(work),
    }),
  );
  httpPart = http;
  const stdio = stack.use(createStdioMode({ context, plugins, imports, dashboard, listen, runtime }));
  stack.use(createApprovalsPart(context, { notifications: options.approvalNotifications !== false }));
  const liveSettings: LiveSettings = createLiveSettings(settings, [
    { owns: (path) => path === 'mcp.enabled', apply: (next) => http.applyMcpEnabled(next.mcp.enabled) },
    // Which servers are published changes the published tools only: no reconnect, no new pairing.
    { owns: (path) => path === 'gateway.publishServers', apply: async () => publications.changed() },
    { owns: (path) => path.startsWith('gateway.') && path !== 'gateway.publishServers', apply: (next) => http.applyGatewaySettings(next) },
    { owns: (path) => path.startsWith('openagent.') || path.startsWith('consent.'), apply: (next) => openagent.apply(next) },
    {
      owns: (path) => path === 'plugins',
      apply: async (next) => {
        if (options.plugins !== false) await plugins.sync(next.plugins);
      },
    },
  ]);
  return { imports, gateway, plugins, browserControl, dashboard, http, stdio, liveSettings, openagent };
}

/** Creates the host: loads settings (a bad file throws `HostError` `invalid_settings`), builds the registry and pipeline. Nothing listens until `start`. */
export function createHost(options: HostOptions = {}): Host {
  const stack = createAsyncStack();
  const closing = new AbortController();
  let context: HostContext;
  let parts: ReturnType<typeof buildParts>;
  const controls: HostControls = {
    status: () => assembleHostStatus({ context, ...(options.gateway === undefined ? {} : { gatewayOverride: options.gateway }), ...parts }),
    rotateToken: () => host.rotateToken(),
    reloadTokens: () => host.reloadTokens(),
    dashboardLoginUrl: () => host.dashboardLoginUrl(),
    patchSettings: (patch) => host.patchSettings(patch),
    restartNeeded: () => parts.liveSettings.restartNeeded(),
    // A host started without settings plugins (tests, `plugins: false`) keeps loading none.
    syncPlugins: async () => (options.plugins === false ? parts.plugins.status() : parts.plugins.sync(loadSettings(context.settings.path).plugins)),
  };
  try {
    context = createHostContext(options, stack, closing.signal);
    parts = buildParts(options, context, stack, controls);
  } catch (error) {
    // A failed build unwinds what was built (the log file, the audit log).
    stack.disposeAsync().catch(() => undefined);
    throw error;
  }
  const { paths, settings, pipeline, logging } = context;
  const { registry, approvals, invoker } = pipeline;
  const { http, stdio, dashboard, imports, plugins, liveSettings } = parts;
  const onAbort = () => void host.close();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  const host: Host = {
    paths,
    registry,
    invoker,
    approvals,
    settings,
    importsReady: () => imports.ready(),
    pluginsReady: () => plugins.ready(),
    start() {
      if (closing.signal.aborted) return Promise.reject(closedError());
      return http.start();
    },
    async serveStdio(stdioOptions = {}) {
      if (closing.signal.aborted) throw closedError();
      await stdio.serve(stdioOptions);
    },
    async rotateToken() {
      const token = await rotateTokenFile(paths.mcpToken);
      logging.knownSecrets.add(token);
      await host.reloadTokens();
      logging.log('info', `MCP token rotated (${paths.mcpToken}); clients need the new one`);
    },
    async reloadTokens() {
      const server = http.listener.server;
      if (server === undefined) return;
      const tokens = readAcceptedTokens(paths, { onWarning: (message) => logging.log('warning', message) });
      for (const entry of tokens) logging.knownSecrets.add(entry.token);
      // An empty list would let nothing in; `mcp-token` is recreated by the next start.
      if (tokens.length > 0) server.setTokens(tokens);
    },
    dashboardLoginUrl() {
      if (closing.signal.aborted) throw closedError();
      try {
        return dashboard.loginUrl();
      } catch (error) {
        throw new HostError('unavailable', (error as Error).message, { cause: error });
      }
    },
    patchSettings(patch) {
      if (closing.signal.aborted) return Promise.reject(closedError());
      return liveSettings.patch(patch);
    },
    status: () => controls.status(),
    close() {
      if (!closing.signal.aborted) {
        // First what streams or waits for input (stdio's stdin, admin and dashboard event streams), then the parts in reverse.
        closing.abort();
        options.signal?.removeEventListener('abort', onAbort);
      }
      return stack.disposeAsync();
    },
    [Symbol.asyncDispose]: () => host.close(),
  };
  return host;
}
