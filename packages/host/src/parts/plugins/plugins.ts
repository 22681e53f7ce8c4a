import { setMaxListeners } from 'node:events';
import { mkdirSync, watch } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { checkPluginPermissions } from '../../setup/pluginsPermissions.js';
import type { Capability, LogLevel, PluginContext, PluginExport, Registry } from '@capnode/capabilities';
import { underscoreToolName } from '@capnode/capabilities';
import type { AvailabilityGate, UnavailableCommand } from '../pipeline/pluginsAvailability.js';
import {
  PluginLoadError,
  isPluginLoadError,
  importPluginModule,
  isPackageName,
  instantiatePlugin,
  pluginDataName,
  pluginsDataDirectory,
  pluginsDirectory,
  resolvePluginSource,
} from '../../setup/pluginsLoad.js';
import type { PluginStatus } from '../../status/hostStatus.js';

export type { PluginStatus } from '../../status/hostStatus.js';

/** Default time a plugin has to load (import and its function) before it counts as failed. */
export const DEFAULT_PLUGIN_LOAD_TIMEOUT_MS = 10_000;
/** Quiet time after the last change of a dev plugin's file before it reloads. */
export const DEV_PLUGIN_DEBOUNCE_MS = 150;


/** A plugin the host ships (the capability pack): its name and export. */
export interface BuiltinPluginEntry {
  readonly name: string;
  readonly plugin: PluginExport;
}

export interface PluginManagerOptions {
  readonly registry: Registry;
  readonly availability: AvailabilityGate;
  /** The config directory: packages resolve from `<home>/plugins/node_modules`, data goes to `<home>/plugins-data/<name>`. */
  readonly home: string;
  /** `pluginSettings` of settings.json, read when each plugin loads. */
  readonly pluginSettings: () => Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly log: (level: LogLevel, message: string) => void;
  /** Loaded first, in order (the pack); a promise when they are imported lazily. */
  readonly builtins?: readonly BuiltinPluginEntry[] | Promise<readonly BuiltinPluginEntry[]>;
  /** settings.json `plugins`: absolute paths or package names. */
  readonly sources?: readonly string[];
  /** `capnode serve --dev-plugin <path>`: loaded last and reloaded when the file changes. */
  readonly devPlugins?: readonly string[];
  readonly loadTimeoutMs?: number;
  /** Run the commands' availability probes (default true; false treats every command as available). */
  readonly probeAvailability?: boolean;
  readonly availabilityTimeoutMs?: number;
}

/** Loads, tracks and unloads the host's plugins. */
export interface PluginManager {
  /** Resolves once every plugin has loaded or failed; never rejects. */
  ready(): Promise<void>;
  status(): readonly PluginStatus[];
  /** Reloads a dev plugin by name: unregister, re-import (cache-busted), register. */
  reload(name: string): Promise<PluginStatus | undefined>;
  /**
   * Makes the loaded settings.json plugins match `sources` without a restart: unloads those no longer
   * listed (their commands leave the registry), loads new ones, and retries the ones that failed
   * (after a `chmod`, say). Built-in and dev plugins stay. Resolves with the status once all settled.
   */
  sync(sources: readonly string[]): Promise<readonly PluginStatus[]>;
  /** Aborts every plugin's signal, stops watching, unregisters nothing (the host is going away). Idempotent. */
  close(): Promise<void>;
}

interface Entry {
  readonly source: string;
  readonly kind: PluginStatus['kind'];
  name: string;
  state: PluginStatus['state'];
  error?: string;
  capabilities: Capability[];
  unavailable: UnavailableCommand[];
  controller: AbortController;
  version: number;
  queue: Promise<unknown>;
  builtin?: PluginExport;
}

function messageOf(error: unknown): string {
  if (isPluginLoadError(error)) return error.message;
  if (error instanceof SyntaxError) return `syntax error: ${error.message}`;
  return (error as Error)?.message ? `${(error as Error).name ?? 'Error'}: ${(error as Error).message}` : String(error);
}

/** The context a plugin function receives; its data directory is created when first read. */
function pluginContext(entry: Entry, home: string, settings: Readonly<Record<string, unknown>>, log: PluginManagerOptions['log']): PluginContext {
  const dataDir = join(pluginsDataDirectory(home), pluginDataName(entry.name));
  const prefix = `plugin ${entry.name}: `;
  let created = false;
  // Created when the plugin first reads it: plugins that keep no files leave nothing behind.
  return {
    name: entry.name,
    settings,
    log: (level: LogLevel, message: string) => log(level === 'notice' ? 'info' : level, `${prefix}${String(message)}`),
    signal: entry.controller.signal,
    configDir: home,
    get dataDir() {
      if (!created) {
        mkdirSync(dataDir, { recursive: true, mode: 0o700 });
        created = true;
      }
      return dataDir;
    },
  };
}

interface RegisterDeps {
  readonly registry: Registry;
  readonly availability: AvailabilityGate;
  readonly entries: readonly Entry[];
  readonly probe: boolean;
  readonly timeoutMs?: number;
}

/** Who already defines `command`: a loaded plugin, or the host itself (as the refusal words it). */
function ownerOf(command: string, self: Entry, deps: RegisterDeps): string | undefined {
  // Either spelling: `a_b` and `a.b` are one tool to a client that lists underscore names.
  const existing = deps.registry.resolve(command) ?? deps.registry.resolve(underscoreToolName(command));
  if (!existing) return undefined;
  const key = existing.name.toLowerCase();
  const owner = deps.entries.find((entry) => entry !== self && entry.state === 'loaded' && entry.capabilities.some((capability) => capability.commands.some((c) => c.name.toLowerCase() === key)));
  const who = owner ? `plugin '${owner.name}' already defines` : "the host's built-in commands already define";
  return key === command.toLowerCase() ? who : `${who} as '${existing.name}' (both are '${underscoreToolName(command)}' in underscore spelling)`;
}

/** A plugin's capabilities with their availability probed, ready to register. */
interface Probed {
  readonly capabilities: readonly Capability[];
  readonly unavailable: readonly UnavailableCommand[];
}

/**
 * A plugin's abort controller. Its signal is shared by every command's availability probe and the
 * plugin's own work at once (the files plugin alone has 13 commands), so Node's default of 10
 * listeners would warn about a leak that is not one.
 */
function pluginController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(256, controller.signal);
  return controller;
}

/** Probes the availability of every capability of a plugin at once (each command has its own deadline). */
async function probePlugin(entry: Entry, capabilities: readonly Capability[], deps: RegisterDeps): Promise<Probed> {
  if (!deps.probe) return { capabilities, unavailable: [] };
  const options = { signal: entry.controller.signal, ...(deps.timeoutMs === undefined ? {} : { timeoutMs: deps.timeoutMs }) };
  const results = await Promise.all(capabilities.map((capability) => deps.availability.probe(capability, options)));
  return { capabilities: results.map((result) => result.capability), unavailable: results.flatMap((result) => result.unavailable) };
}

/** Registers all of the plugin's probed capabilities, or none (a duplicate refuses the whole plugin). */
function registerPlugin(entry: Entry, { capabilities: probed, unavailable }: Probed, deps: RegisterDeps): void {
  const seen = new Set<string>();
  for (const command of probed.flatMap((capability) => capability.commands)) {
    const key = command.name.toLowerCase();
    if (seen.has(key)) throw new PluginLoadError('duplicate_command', `plugin '${entry.name}' defines command '${command.name}' twice`);
    seen.add(key);
    const owner = ownerOf(command.name, entry, deps);
    if (owner) throw new PluginLoadError('duplicate_command', `plugin '${entry.name}' defines command '${command.name}', which ${owner}; '${entry.name}' was not loaded (rename the command or remove one of them)`);
  }
  const done: Capability[] = [];
  try {
    for (const capability of probed) {
      deps.registry.register(capability);
      done.push(capability);
    }
  } catch (error) {
    for (const capability of done) deps.registry.unregister(capability);
    throw new PluginLoadError('register_failed', `plugin '${entry.name}' could not be registered: ${(error as Error).message}`);
  }
  entry.capabilities = [...probed];
  entry.unavailable = [...unavailable];
}

/** Watches a dev plugin's file (through its folder: editors replace files, which ends a watch on the file), debounced. */
function watchDevPlugin(path: string, onChange: () => void, warn: (message: string) => void): { close(): void }[] {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const file = basename(path);
  try {
    const watcher = watch(dirname(path), { persistent: false }, (_event, changed) => {
      if (changed !== null && changed.toString() !== file) return;
      clearTimeout(timer);
      timer = setTimeout(onChange, DEV_PLUGIN_DEBOUNCE_MS);
    });
    watcher.on('error', (error) => warn(`watching ${path} failed: ${error.message}`));
    return [watcher, { close: () => clearTimeout(timer) }];
  } catch (error) {
    warn(`cannot watch ${path}: ${(error as Error).message}`);
    return [];
  }
}

function statusOf(entry: Entry): PluginStatus {
  return {
    name: entry.name,
    source: entry.source,
    kind: entry.kind,
    state: entry.state,
    commands: entry.capabilities.flatMap((capability) => capability.commands.map((command) => command.name)),
    unavailable: [...entry.unavailable],
    ...(entry.error === undefined ? {} : { error: entry.error }),
  };
}

/** What {@link syncSources} borrows from the manager. */
interface SyncDeps {
  readonly entries: Entry[];
  readonly kindOf: (source: string) => Entry['kind'];
  readonly nameOf: (source: string) => string;
  readonly newEntry: (source: string, kind: Entry['kind'], name: string) => Entry;
  readonly unload: (entry: Entry) => void;
  readonly prepare: (entry: Entry) => Promise<Probed | undefined>;
  readonly finish: (entry: Entry, prepared: Promise<Probed | undefined>) => Promise<void>;
  readonly log: PluginManagerOptions['log'];
}

/** Unloads settings plugins no longer in `sources`, then loads the new and the failed ones, in order. */
async function syncSources(sources: readonly string[], deps: SyncDeps): Promise<void> {
  const wanted = new Set(sources);
  for (const entry of [...deps.entries]) {
    if ((entry.kind !== 'file' && entry.kind !== 'package') || wanted.has(entry.source)) continue;
    deps.unload(entry);
    deps.entries.splice(deps.entries.indexOf(entry), 1);
    deps.log('info', `plugin ${entry.name} unloaded (${entry.source})`);
  }
  const todo: Entry[] = [];
  for (const source of sources) {
    const existing = deps.entries.find((entry) => entry.source === source && (entry.kind === 'file' || entry.kind === 'package'));
    if (existing === undefined) todo.push(deps.newEntry(source, deps.kindOf(source), deps.nameOf(source)));
    else if (existing.state === 'failed') {
      existing.state = 'loading';
      delete existing.error;
      existing.version += 1;
      existing.controller = pluginController();
      todo.push(existing);
    }
  }
  const prepared = todo.map((entry) => deps.prepare(entry));
  for (const work of prepared) work.catch(() => undefined);
  for (const [index, entry] of todo.entries()) {
    await deps.finish(entry, prepared[index]!);
    if (entry.state === 'loaded') deps.log('info', `plugin ${entry.name} loaded: ${entry.capabilities.flatMap((capability) => capability.commands.map((command) => command.name)).join(', ') || '(no commands)'}`);
  }
}

/** Creates the plugin manager and starts loading at once (see {@link PluginManager.ready}). */
export function createPluginManager(options: PluginManagerOptions): PluginManager {
  const { registry, availability, home, log } = options;
  const pluginsDir = pluginsDirectory(home);
  const loadTimeoutMs = options.loadTimeoutMs ?? DEFAULT_PLUGIN_LOAD_TIMEOUT_MS;
  const entries: Entry[] = [];
  const watchers: { close(): void }[] = [];
  let closed = false;

  const kindOf = (source: string): Entry['kind'] => (isAbsolute(source) || !isPackageName(source) ? 'file' : 'package');
  const nameOf = (source: string): string => (isAbsolute(source) ? basename(source).replace(/\.[^.]*$/, '') : source);
  const newEntry = (source: string, kind: Entry['kind'], name: string): Entry => {
    const entry: Entry = { source, kind, name, state: 'loading', capabilities: [], unavailable: [], controller: pluginController(), version: 0, queue: Promise.resolve() };
    entries.push(entry);
    return entry;
  };

  const deps = (): RegisterDeps => ({ registry, availability, entries, probe: options.probeAvailability !== false, ...(options.availabilityTimeoutMs === undefined ? {} : { timeoutMs: options.availabilityTimeoutMs }) });

  /** Imports the plugin, runs its function and probes its commands: all but registering, so plugins can prepare at once. */
  async function prepare(entry: Entry): Promise<Probed | undefined> {
    let importing: Promise<unknown> | PluginExport;
    if (entry.builtin !== undefined) importing = entry.builtin;
    else {
      const resolved = resolvePluginSource(entry.source, pluginsDir);
      if (entry.kind !== 'dev' || entry.version === 0) entry.name = resolved.name;
      // Before the import: code that another user could have changed never runs.
      checkPluginPermissions(isAbsolute(entry.source) ? entry.source : join(pluginsDir, 'node_modules', ...entry.source.split('/')), resolved.file);
      importing = importPluginModule(resolved.file, entry.kind === 'dev' || entry.version > 0 ? entry.version : undefined);
    }
    const what = `plugin '${entry.name}' (${entry.source})`;
    const capabilities = await instantiatePlugin(importing, pluginContext(entry, home, options.pluginSettings()[entry.name] ?? {}, log), what, loadTimeoutMs, () => entry.controller.abort(new Error('the plugin did not load in time')));
    if (closed) return undefined;
    return probePlugin(entry, capabilities, deps());
  }

  /** Registers what `prepare` gave (in the order plugins are configured: the first to define a command keeps it), or records the failure. */
  async function finish(entry: Entry, prepared: Promise<Probed | undefined>): Promise<void> {
    try {
      const probed = await prepared;
      if (closed || probed === undefined) return;
      registerPlugin(entry, probed, deps());
      entry.state = 'loaded';
      const commands = entry.capabilities.flatMap((capability) => capability.commands.map((command) => command.name));
      log('debug', `plugin ${entry.name} loaded: ${commands.join(', ') || '(no commands)'}`);
      // One line per install hint, not per command: a missing display makes a plugin's every command unavailable.
      const byHint = new Map<string, string[]>();
      for (const missing of entry.unavailable) byHint.set(missing.install, [...(byHint.get(missing.install) ?? []), missing.command]);
      for (const [install, commands] of byHint) log('info', `plugin ${entry.name}: ${commands.join(', ')} unavailable here: install ${install}`);
    } catch (error) {
      entry.state = 'failed';
      entry.error = messageOf(error);
      entry.controller.abort(new Error('the plugin failed to load'));
      log('warning', `plugin ${entry.name} (${entry.source}) failed to load: ${entry.error}`);
    }
  }

  async function load(entry: Entry): Promise<void> {
    entry.state = 'loading';
    delete entry.error;
    await finish(entry, prepare(entry));
  }

  function unload(entry: Entry): void {
    entry.controller.abort(new Error('the plugin is unloaded'));
    for (const capability of entry.capabilities) registry.unregister(capability);
    entry.capabilities = [];
    entry.unavailable = [];
    entry.controller = pluginController();
  }

  function reloadEntry(entry: Entry): Promise<void> {
    const run = entry.queue.then(async () => {
      if (closed) return;
      unload(entry);
      entry.version += 1;
      await load(entry);
      log('info', `dev plugin ${entry.name} reloaded: ${entry.state}${entry.error ? ` (${entry.error})` : ''}`);
    });
    entry.queue = run.catch(() => undefined);
    return run;
  }

  const loading = (async () => {
    const builtins = await Promise.resolve(options.builtins ?? []).catch((error: unknown) => {
      log('error', `the built-in plugins could not be loaded: ${messageOf(error)}`);
      return [] as readonly BuiltinPluginEntry[];
    });
    for (const builtin of builtins) {
      const entry = newEntry(`builtin:${builtin.name}`, 'builtin', builtin.name);
      entry.builtin = builtin.plugin;
    }
    for (const source of options.sources ?? []) newEntry(source, kindOf(source), nameOf(source));
    for (const source of options.devPlugins ?? []) newEntry(source, 'dev', basename(source).replace(/\.[^.]*$/, ''));
    // Imported, run and probed all at once (a slow probe holds up no other plugin); registered one at
    // a time, in order: the first plugin to define a command keeps it.
    const prepared = entries.map((entry) => prepare(entry));
    for (const work of prepared) work.catch(() => undefined);
    for (const [index, entry] of entries.entries()) {
      if (closed) break;
      await finish(entry, prepared[index]!);
      if (entry.kind === 'dev') watchers.push(...watchDevPlugin(entry.source, () => void reloadEntry(entry), (message) => log('warning', `dev plugin ${entry.name}: ${message}`)));
    }
  })();

  let syncing: Promise<unknown> = loading;
  const status = () => entries.map(statusOf);
  return {
    ready: () => loading,
    status,
    sync(sources) {
      const run = syncing.then(async () => {
        if (closed) return status();
        await syncSources(sources, { entries, kindOf, nameOf, newEntry, unload, prepare, finish, log });
        return status();
      });
      syncing = run.catch(() => undefined);
      return run;
    },
    async reload(name) {
      const entry = entries.find((candidate) => candidate.name === name);
      if (!entry) return undefined;
      await reloadEntry(entry);
      return this.status().find((status) => status.name === entry.name);
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const watcher of watchers.splice(0)) watcher.close();
      for (const entry of entries) entry.controller.abort(new Error('the host is closing'));
    },
  };
}
