import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Capability, PluginContext, PluginExport } from '@capnode/capabilities';
import { armDeadline, defineErrorClass, type DeadlineTimer } from '@capnode/toolkit';

/** Where `capnode plugins add <package>` installs packages: `<config dir>/plugins` (an npm prefix). */
export function pluginsDirectory(home: string): string {
  return join(home, 'plugins');
}

/** The parent of every plugin's data directory: `<config dir>/plugins-data`. */
export function pluginsDataDirectory(home: string): string {
  return join(home, 'plugins-data');
}

/** A plugin's data directory name: its name with `/` (scoped packages) spelled `+`. */
export function pluginDataName(name: string): string {
  return name.replace(/[/\\]/g, '+');
}

const PACKAGE_NAME = /^(?:@[a-z0-9~][a-z0-9._~-]*\/)?[a-z0-9~][a-z0-9._~-]*$/i;

/** True for an npm package name (`name` or `@scope/name`), the other spelling of a plugin source beside an absolute path. */
export function isPackageName(value: string): boolean {
  return PACKAGE_NAME.test(value) && !value.includes('..');
}

/** Where a plugin's module is: its name (package name or file name without extension) and the file to import. */
export interface ResolvedPlugin {
  readonly name: string;
  readonly kind: 'file' | 'package';
  readonly file: string;
}

/** Why a plugin did not load; its message is the diagnostic `capnode status` shows. */
export class PluginLoadError extends defineErrorClass('PluginLoadError', [
  /** The path does not exist, the package is not installed, or its entry file is missing. */
  'not_found',
  /** A `plugins` entry that is neither an absolute path nor a package name. */
  'invalid_source',
  /** The package's `package.json` cannot be read, or its entry lies outside the package. */
  'invalid_package',
  /** The module has no default export, or it does not describe capabilities. */
  'invalid_export',
  /** The import and the plugin's function did not finish within the load timeout. */
  'timeout',
  /** The plugin defines a command twice, or one another plugin or a built-in already has. */
  'duplicate_command',
  /** The registry refused the plugin's capabilities. */
  'register_failed',
  /** Another user owns the plugin's files, or could change them (group/others writable, or in a folder others can write without the sticky bit). */
  'unsafe_permissions',
]) {}

/** Why a plugin did not load, as a code. */
export type PluginLoadErrorCode = PluginLoadError['code'];

/** True when `value` is a {@link PluginLoadError}, across package copies and bundles. */
export function isPluginLoadError(value: unknown): value is PluginLoadError {
  return PluginLoadError.is(value);
}

type Exports = string | null | { readonly [key: string]: Exports } | readonly Exports[];

/** The file an `exports` value points to for `import` from Node (conditions import, node, default). */
function exportTarget(value: Exports | undefined): string | undefined {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return undefined;
  if (Array.isArray(value)) {
    for (const entry of value) {
      const target = exportTarget(entry);
      if (target) return target;
    }
    return undefined;
  }
  const map = value as { readonly [key: string]: Exports };
  if ('.' in map) return exportTarget(map['.']);
  for (const condition of ['import', 'node', 'default']) {
    if (condition in map) {
      const target = exportTarget(map[condition]);
      if (target) return target;
    }
  }
  return undefined;
}

/** The entry file of the package in `directory` (its `exports` `.`, else `main`, else `index.js`), kept inside the folder. */
export function packageEntry(directory: string): { readonly name: string; readonly file: string } {
  const manifestPath = join(directory, 'package.json');
  let manifest: { name?: unknown; exports?: Exports; main?: unknown };
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as typeof manifest;
  } catch (error) {
    throw new PluginLoadError('invalid_package', `cannot read ${manifestPath}: ${(error as Error).message}`);
  }
  const target = exportTarget(manifest.exports) ?? (typeof manifest.main === 'string' ? manifest.main : undefined) ?? 'index.js';
  const file = resolve(directory, target);
  const inside = relative(directory, file);
  if (inside.startsWith('..') || isAbsolute(inside)) throw new PluginLoadError('invalid_package', `the entry ${target} of ${manifestPath} is outside the package`);
  if (!existsSync(file)) throw new PluginLoadError('not_found', `the entry ${target} of ${manifestPath} does not exist`);
  // Symlinks resolved: an entry that links out of the (real) package folder is outside it too.
  const real = relative(realpathSync(directory), realpathSync(file));
  if (real.startsWith('..') || isAbsolute(real)) throw new PluginLoadError('invalid_package', `the entry ${target} of ${manifestPath} is outside the package (a symlink out of it)`);
  return { name: typeof manifest.name === 'string' && manifest.name ? manifest.name : basename(directory), file };
}

/**
 * Resolves a `plugins` entry: an absolute path of a module file (name: the file name without
 * extension) or of a package folder, or a package name installed in `pluginsDir/node_modules`.
 * @throws PluginLoadError naming what is wrong and how to fix it.
 */
export function resolvePluginSource(source: string, pluginsDir: string): ResolvedPlugin {
  if (isAbsolute(source)) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(source).isDirectory();
    } catch {
      throw new PluginLoadError('not_found', `${source} does not exist`);
    }
    if (isDirectory) return { kind: 'file', ...packageEntry(source) };
    return { name: basename(source, extname(source)), kind: 'file', file: source };
  }
  if (!isPackageName(source)) throw new PluginLoadError('invalid_source', `'${source}' is neither an absolute path nor a package name`);
  const directory = join(pluginsDir, 'node_modules', ...source.split('/'));
  if (!existsSync(join(directory, 'package.json'))) {
    throw new PluginLoadError('not_found', `package ${source} is not installed in ${pluginsDir}${sep}node_modules: install it with capnode plugins add ${source}`);
  }
  const entry = packageEntry(directory);
  return { name: source, kind: 'package', file: entry.file };
}

/** Imports a plugin module's default export; `version` (dev reloads) busts the module cache. */
export async function importPluginModule(file: string, version?: number): Promise<unknown> {
  const url = pathToFileURL(file);
  if (version !== undefined) url.search = `capnode-reload=${version}`;
  const module = (await import(url.href)) as { default?: unknown };
  if (!('default' in module) || module.default === undefined) throw new PluginLoadError('invalid_export', `${file} has no default export (export default definePlugin(...))`);
  return module.default;
}

/** What is wrong with a value that should be a capability; undefined when it is one. */
function capabilityProblem(value: unknown, where: string): string | undefined {
  if (typeof value !== 'object' || value === null) return `${where} is ${value === null ? 'null' : typeof value}, not a capability ({ category, commands })`;
  const { category, commands } = value as { category?: unknown; commands?: unknown };
  if (typeof category !== 'string' || !category.trim()) return `${where} has no category (a non-empty string)`;
  if (!Array.isArray(commands)) return `${where} (category '${category}') has no commands array`;
  for (const [index, command] of commands.entries()) {
    const at = `command ${index} of category '${category}'`;
    if (typeof command !== 'object' || command === null) return `${at} is not an object`;
    const { name, description, execute, input } = command as Record<string, unknown>;
    if (typeof name !== 'string' || !name.trim()) return `${at} has no name`;
    if (typeof description !== 'string') return `command '${name}' has no description`;
    if (typeof execute !== 'function') return `command '${name}' has no execute function`;
    if (input !== undefined && typeof (input as { safeParse?: unknown })?.safeParse !== 'function') return `command '${name}' has an input that is not a zod schema (use the z exported by @capnode/capabilities)`;
  }
  return undefined;
}

/** The capabilities a plugin's default export (or its function's result) describes. @throws PluginLoadError */
export function toCapabilities(value: unknown, what: string): readonly Capability[] {
  const list = Array.isArray(value) ? value : [value];
  for (const [index, entry] of list.entries()) {
    const problem = capabilityProblem(entry, Array.isArray(value) ? `entry ${index} of ${what}` : what);
    if (problem) throw new PluginLoadError('invalid_export', `${problem}; a plugin exports a capability, an array of capabilities, or a function returning them`);
  }
  return list as Capability[];
}

/** A timer that rejects after `ms` with `message`; `clear` stops it. */
/**
 * A rejection at `ms`. The timer is ref'd on purpose: a host whose only pending work is a plugin load
 * that never settles must report that plugin as failed, not exit silently with an empty event loop.
 */
function deadline(ms: number, message: string): { readonly promise: Promise<never>; clear(): void } {
  let timer: DeadlineTimer | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = armDeadline({ timeoutMs: ms, timeoutReason: () => new PluginLoadError('timeout', message) }, reject);
  });
  promise.catch(() => undefined);
  return { promise, clear: () => timer?.clear() };
}

/**
 * Turns a plugin's default export into capabilities: calls it with `context` when it is a function
 * (awaiting it), within `timeoutMs` for the import and the call together (`importing` is the import
 * under way). On a timeout `onTimeout` runs (the host aborts the plugin's signal).
 */
export async function instantiatePlugin(
  importing: Promise<unknown> | PluginExport,
  context: PluginContext,
  what: string,
  timeoutMs: number,
  onTimeout: () => void,
): Promise<readonly Capability[]> {
  const timer = deadline(timeoutMs, `${what} did not load within ${timeoutMs} ms (its module or its function never finished)`);
  try {
    const exported = await Promise.race([Promise.resolve(importing), timer.promise]);
    const value = typeof exported === 'function' ? await Promise.race([Promise.resolve().then(() => (exported as (context: PluginContext) => unknown)(context)), timer.promise]) : exported;
    return toCapabilities(value, typeof exported === 'function' ? `the value returned by ${what}` : `the default export of ${what}`);
  } catch (error) {
    if (isPluginLoadError(error) && error.code === 'timeout') onTimeout();
    throw error;
  } finally {
    timer.clear();
  }
}
