import { rotateToken as rotateTokenFile } from '@capnode/mcp-server/node';
import { createAsyncStack } from '@capnode/toolkit';
import { createRuntimeFiles } from '../config/runtimeFiles.js';
import { hostSelfIdentity } from '../config/selfIdentity.js';
import { createLiveSettings, type LiveSettings } from '../config/settingsPatch.js';
import { createBackgroundWork } from '../context/backgroundWork.js';
import { createHostContext, type HostContext, type HostControls } from '../context/hostContext.js';
import { HostError } from '../errors.js';
import { createAdminPart } from '../parts/admin/adminPart.js';
import { createBrowserControlPart } from '../parts/browser/browserPart.js';
import { createDashboardPart } from '../parts/dashboard/dashboardPart.js';
import { createGatewayMode } from '../parts/gateway/gatewayMode.js';
import { createImportedTools } from '../parts/imports/importedTools.js';
import { createHttpMode } from '../parts/listener/httpMode.js';
import { createLockHolder } from '../parts/listener/lockHolder.js';
import { createListen } from '../parts/listener/mcpListener.js';
import { createOpenAgentPart } from '../parts/openagent/openAgentPart.js';
import { createAppCapability } from '../parts/pipeline/appStatus.js';
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
  registry.register(createAppCapability(() => controls.status()));
  for (const capability of options.capabilities ?? []) registry.register(capability);
  const { settings, pipeline, version } = context;
  const { log } = context.logging;
  const identity = hostSelfIdentity(context.paths, () => settings.get().mcp.port, options.port === undefined ? [] : [options.port]);
  const imports = stack.use(createImportedTools({ settings, invoker: pipeline.invoker, approvals: pipeline.approvals, log, version, instance: context.instance, identity }));
  const gateway = stack.use(createGatewayMode({ paths: context.paths, invoker: pipeline.invoker, registry, version, log }));
  const plugins = stack.use(createPluginsPart(context, options, { gatewayCanvasUrl: () => gateway.surfaceUrl('canvas') }));
  const browserControl = stack.use(createBrowserControlPart(context));
  const openagent = stack.use(createOpenAgentPart(context, { ...(options.openagent === undefined ? {} : { override: options.openagent }), imports }));
  const background = stack.use(createBackgroundWork(log));
  // A settings.json still in an older form (`node`, now `gateway`) is rewritten once, under the settings lock; loading it warned.
  background.run(settings.migrate());
  const dashboard = stack.use(createDashboardPart(context, controls));
  const listen = createListen(context, createAdminPart(context, controls));
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
  const stdio = stack.use(createStdioMode({ context, plugins, imports, dashboard, listen, runtime }));
  stack.use(createApprovalsPart(context, { notifications: options.approvalNotifications !== false }));
  const liveSettings: LiveSettings = createLiveSettings(settings, [
    { owns: (path) => path === 'mcp.enabled', apply: (next) => http.applyMcpEnabled(next.mcp.enabled) },
    { owns: (path) => path.startsWith('gateway.'), apply: (next) => http.applyGatewaySettings(next) },
    { owns: (path) => path.startsWith('openagent.') || path.startsWith('consent.'), apply: (next) => openagent.apply(next) },
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
    dashboardLoginUrl: () => host.dashboardLoginUrl(),
    patchSettings: (patch) => host.patchSettings(patch),
    restartNeeded: () => parts.liveSettings.restartNeeded(),
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
      http.listener.server?.setToken(token);
      logging.log('info', `MCP token rotated (${paths.mcpToken}); clients need the new one`);
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
