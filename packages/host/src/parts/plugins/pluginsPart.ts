import type { HostContext } from '../../context/hostContext.js';
import { createPluginManager, type BuiltinPluginEntry, type PluginManager } from './plugins.js';
import type { GatewayCanvasSurface } from '@capnode/capabilities/pack';

/** The `HostOptions` the plugins part reads. */
export interface PluginsPartOptions {
  readonly plugins?: boolean;
  readonly builtinPlugins?: readonly BuiltinPluginEntry[] | false;
  readonly devPlugins?: readonly string[];
  readonly pluginLoadTimeoutMs?: number;
  readonly probeAvailability?: boolean;
  readonly availabilityTimeoutMs?: number;
}

/** What the plugins part borrows from later parts, handed over by `createHost`. */
export interface PluginsPartPorts {
  /** The connected gateway's `pluginSurfaceUrls.canvas`, for the pack's canvas. */
  readonly gatewayCanvasUrl?: GatewayCanvasSurface;
}

/** The plugins part: the shipped pack, then settings.json `plugins`, then dev plugins, loaded into the pipeline's registry. */
export function createPluginsPart(context: HostContext, options: PluginsPartOptions, ports: PluginsPartPorts = {}): PluginManager {
  const { settings, pipeline } = context;
  return createPluginManager({
    registry: pipeline.registry,
    availability: pipeline.availability,
    home: context.paths.home,
    pluginSettings: () => settings.get().pluginSettings,
    log: context.logging.log,
    builtins: options.builtinPlugins === false ? [] : (options.builtinPlugins ?? import('@capnode/capabilities/pack').then((pack) => pack.createBuiltinPlugins({ filesSettings: () => settings.get().pluginSettings.files ?? {}, ...(ports.gatewayCanvasUrl ? { gatewayCanvasUrl: ports.gatewayCanvasUrl } : {}) }))),
    sources: options.plugins === false ? [] : settings.get().plugins,
    ...(options.devPlugins === undefined ? {} : { devPlugins: options.devPlugins }),
    ...(options.pluginLoadTimeoutMs === undefined ? {} : { loadTimeoutMs: options.pluginLoadTimeoutMs }),
    ...(options.probeAvailability === undefined ? {} : { probeAvailability: options.probeAvailability }),
    ...(options.availabilityTimeoutMs === undefined ? {} : { availabilityTimeoutMs: options.availabilityTimeoutMs }),
  });
}
