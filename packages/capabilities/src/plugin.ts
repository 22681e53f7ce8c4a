import type { Capability, LogLevel } from './contract.js';

/** What a plugin function receives from the host that loads it. */
export interface PluginContext {
  /** The plugin's name (its package name, or its file name without extension). */
  readonly name: string;
  /** The plugin's own settings section (`pluginSettings[name]` in settings.json); `{}` when absent. */
  readonly settings: Readonly<Record<string, unknown>>;
  /** Writes to the host log, prefixed with the plugin's name. */
  readonly log: (level: LogLevel, message: string) => void;
  /** A private directory for the plugin's files (`<config dir>/plugins-data/<name>`), created when first read. */
  readonly dataDir: string;
  /**
   * The host's config directory (settings, tokens, audit log). A plugin that reaches the user's files
   * keeps out of it: the files commands refuse every path in it, whatever their roots say.
   */
  readonly configDir: string;
  /** Aborted when the host closes or the plugin is unloaded (dev reload). */
  readonly signal: AbortSignal;
}

/** What a plugin module's default export may be: capabilities, or a function returning them. */
export type PluginExport =
  | Capability
  | readonly Capability[]
  | ((context: PluginContext) => Capability | readonly Capability[] | Promise<Capability | readonly Capability[]>);

/** Types a plugin's default export; returns it unchanged. */
export function definePlugin<T extends PluginExport>(plugin: T): T {
  return plugin;
}
