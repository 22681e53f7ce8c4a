import { existsSync, mkdirSync } from 'node:fs';
import { createAppCapability } from '../parts/pipeline/appStatus.js';
import { HostError } from '../errors.js';
import { createGatewayMode, type GatewayMode } from '../parts/gateway/gatewayMode.js';
import type { HostOptions, HostStatus } from './hostTypes.js';
import { createImportedTools, type ImportedTools } from '../parts/imports/importedTools.js';
import { HOME_ENV, type HostPaths } from '../config/paths.js';
import { createHostPipeline, type HostPipeline } from '../parts/pipeline/pipeline.js';
import { createPluginManager, type PluginManager } from '../parts/plugins/plugins.js';
import { createSettingsStore, type SettingsStore } from '../config/settings.js';
import { describePending, startApprovalNotifier } from '../parts/pipeline/approvalNotices.js';
import type { HostLogging } from '../context/hostLogging.js';
import { ensurePrivateDirectory } from '../files/secureFile.js';

export interface HostCoreOptions {
  readonly options: HostOptions;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly paths: HostPaths;
  readonly logging: HostLogging;
  readonly version: string;
  /** The host's status, for the `app` capability. */
  readonly status: () => HostStatus;
}

/** What every host has, listening or not: settings, the pipeline, plugins, imported tools, the gateway connection. */
export interface HostCore {
  /** settings.json did not exist when the host was created. */
  readonly firstRun: boolean;
  readonly settings: SettingsStore;
  readonly pipeline: HostPipeline;
  readonly plugins: PluginManager;
  readonly imports: ImportedTools;
  readonly gateway: GatewayMode;
  /** Stops the desktop notifications of pending approvals. */
  readonly stopNotifier: () => Promise<void>;
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

/** Announces each pending approval in the host log (and how it ended, unless answered) and, unless turned off, on the desktop. */
function announceApprovals(core: Pick<HostCore, 'settings' | 'pipeline'>, input: HostCoreOptions): () => Promise<void> {
  const { env, paths, logging } = input;
  const { approvals } = core.pipeline;
  const notificationsOn = input.options.approvalNotifications !== false;
  const stopNotifier = startApprovalNotifier({ broker: approvals, enabled: () => notificationsOn && core.settings.get().approvals.notify, env, log: logging.log });
  const homeHint = env[HOME_ENV] ? `CAPNODE_HOME=${paths.home} ` : '';
  approvals.subscribe((event) => {
    if (event.type === 'requested') logging.log('warning', describePending(event.approval, homeHint));
    else if (event.settlement !== 'answered') logging.log('info', `approval ${event.approval.id} ${event.settlement === 'timeout' ? 'timed out (denied)' : `ended: ${event.settlement}`}`);
  });
  return stopNotifier;
}

export function createHostCore(input: HostCoreOptions): HostCore {
  const { options, paths, logging, version } = input;
  const { log } = logging;
  const { settings, firstRun } = openSettings(paths, logging.warn);
  logging.scrubSettings(settings);
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
  const stopNotifier = announceApprovals({ settings, pipeline }, input);

  registry.register(createAppCapability(input.status));
  for (const capability of options.capabilities ?? []) registry.register(capability);
  const plugins = createPluginManager({
    registry,
    availability: pipeline.availability,
    home: paths.home,
    pluginSettings: () => settings.get().pluginSettings,
    log,
    builtins: options.builtinPlugins === false ? [] : (options.builtinPlugins ?? import('@capnode/capabilities/pack').then((pack) => pack.builtinPlugins)),
    sources: options.plugins === false ? [] : settings.get().plugins,
    ...(options.devPlugins === undefined ? {} : { devPlugins: options.devPlugins }),
    ...(options.pluginLoadTimeoutMs === undefined ? {} : { loadTimeoutMs: options.pluginLoadTimeoutMs }),
    ...(options.probeAvailability === undefined ? {} : { probeAvailability: options.probeAvailability }),
    ...(options.availabilityTimeoutMs === undefined ? {} : { availabilityTimeoutMs: options.availabilityTimeoutMs }),
  });
  const imports = createImportedTools({ settings, invoker, approvals, log, version });
  const gateway = createGatewayMode({ paths, invoker, registry, version, log });
  return { firstRun, settings, pipeline, plugins, imports, gateway, stopNotifier };
}
