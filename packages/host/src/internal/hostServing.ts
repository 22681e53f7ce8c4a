import type { DashboardService } from '../dashboard/service.js';
import { createLiveSettings, type LiveSettings } from '../dashboard/settingsPatch.js';
import type { Host, HostOptions } from '../hostTypes.js';
import type { HostPaths } from '../paths.js';
import { createControlSurfaces } from './controlSurfaces.js';
import type { BackgroundWork } from './hostClose.js';
import type { HostCore } from './hostCore.js';
import type { HostLogging } from './hostLogging.js';
import { createHttpMode, type HttpMode } from './httpMode.js';
import { createListen, createMcpListener, type McpListener } from './mcpListener.js';
import { createRuntimeFiles } from './runtimeFiles.js';
import { createStdioMode, type StdioMode } from './stdioMode.js';

export interface HostServingOptions {
  readonly options: HostOptions;
  readonly core: HostCore;
  readonly paths: HostPaths;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logging: HostLogging;
  readonly version: string;
  /** Tells this host's files (`host.json`, `run/*`) from another host's of the same process. */
  readonly instance: string;
  /** When the host was created (ms since the epoch). */
  readonly started: number;
  readonly closed: () => boolean;
  /** The host the dashboard and admin routes act on. */
  readonly host: () => Host;
  /** The host logged that it started. */
  readonly announce: () => void;
  readonly background: BackgroundWork;
  /** Aborting ends the admin and dashboard event streams. */
  readonly adminSignal: AbortSignal;
}

/** How the host is reached: dashboard, MCP listener, HTTP (start) and stdio modes, and the settings they apply live. */
export interface HostServing {
  readonly dashboard: DashboardService;
  readonly listener: McpListener;
  readonly http: HttpMode;
  readonly stdio: StdioMode;
  readonly liveSettings: LiveSettings;
}

export function createHostServing(input: HostServingOptions): HostServing {
  const { options, core, paths, env, version } = input;
  const { log, fileLog, knownSecrets } = input.logging;
  const { settings, plugins, imports, gateway } = core;
  const { invoker } = core.pipeline;
  const serverInfo = { name: 'capnode', version };
  const overrides = {
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.port === undefined ? {} : { port: options.port }),
  };
  const { dashboard, adminHandler } = createControlSurfaces({ core, paths, env, version, log, signal: input.adminSignal, host: input.host, restartNeeded: () => liveSettings.restartNeeded() });
  const runtime = createRuntimeFiles({ instance: input.instance, started: input.started, version, dashboardUrl: () => dashboard.status().url, log });
  const listen = createListen({ invoker, settings, serverInfo, adminHandler, log });
  const listener = createMcpListener({ paths, settings, ...overrides, listen, knownSecrets, fileLog, closed: input.closed });
  const adminOnly = { paths, listen, runtime, knownSecrets, log };
  const http = createHttpMode({
    paths,
    settings,
    env,
    instance: input.instance,
    version,
    ...overrides,
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
    closed: input.closed,
    status: () => input.host().status(),
    announce: input.announce,
    inBackground: (work) => input.background.run(work),
  });
  const stdio = createStdioMode({ paths, invoker, serverInfo, plugins, imports, dashboard, runtime, adminOnly, log, fileLog, announce: input.announce });
  const liveSettings = createLiveSettings(settings, [
    { owns: (path) => path === 'mcp.enabled', apply: (next) => http.applyMcpEnabled(next.mcp.enabled) },
    { owns: (path) => path.startsWith('gateway.'), apply: (next) => http.applyGatewaySettings(next) },
  ]);
  return { dashboard, listener, http, stdio, liveSettings };
}
