import type { PluginExport } from './plugin.js';

/** One plugin of the capability pack: its name (the `pluginSettings` key) and the plugin itself. */
export interface BuiltinPlugin {
  readonly name: string;
  readonly plugin: PluginExport;
}

/**
 * The capability pack the stock host loads as plugins (screen, camera, clipboard, speech, location,
 * notifications), each on the public plugin API. A command whose backend is missing here is marked
 * unavailable by its `availability` probe; heavy modules load inside `execute`, never at import.
 */
export const builtinPlugins: readonly BuiltinPlugin[] = [];
