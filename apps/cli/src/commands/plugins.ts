import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { PluginStatus } from '@capnode/host';
import { listRuntimeStates } from '@capnode/host/setup';
import { readToken, type Context } from '../context.js';
import { CliError, hostFailure } from '../errors.js';
import { readText, send } from '../http.js';

const USAGE = 'usage: capnode plugins list | add <absolute path|package> | remove <name> | new <name>';

type HostModule = typeof import('@capnode/host') & typeof import('@capnode/host/settings') & typeof import('@capnode/host/setup') & typeof import('@capnode/host/docs');

async function loadHost(): Promise<HostModule> {
  const [root, settings, setup, docs] = await Promise.all([import('@capnode/host'), import('@capnode/host/settings'), import('@capnode/host/setup'), import('@capnode/host/docs')]);
  return { ...root, ...settings, ...setup, ...docs };
}

async function openStore(context: Context, host: HostModule) {
  try {
    return host.createSettingsStore(context.paths.settings);
  } catch (error) {
    hostFailure(error, host);
  }
}

/** `capnode plugins list|add|remove|new`: the plugins settings.json lists (their load state: capnode status). */
export async function plugins(context: Context): Promise<number> {
  const [, action, target, extra] = context.args.positionals;
  if (extra !== undefined) throw new CliError('usage', `unexpected argument '${extra}' — ${USAGE}`);
  switch (action) {
    case undefined:
    case 'list':
      if (target !== undefined) throw new CliError('usage', `unexpected argument '${target}' — ${USAGE}`);
      return list(context);
    case 'add':
      if (target === undefined) throw new CliError('usage', USAGE);
      return add(context, target);
    case 'remove':
      if (target === undefined) throw new CliError('usage', USAGE);
      return remove(context, target);
    case 'new':
      if (target === undefined) throw new CliError('usage', USAGE);
      return (await import('./pluginsNew.js')).createPluginProject(context, target);
    default:
      throw new CliError('usage', `unknown action '${action}' — ${USAGE}`);
  }
}

/**
 * Applies the change to every running host of this config directory at once (`POST /_capnode/plugins/sync`:
 * it loads what settings.json lists and unloads the rest; MCP clients get tools/list_changed). Returns
 * the statuses of `name` the hosts report, one per host reached.
 */
async function applyToRunningHosts(context: Context, name: string): Promise<{ pid: number; plugin: PluginStatus | undefined }[]> {
  const states = listRuntimeStates(context.paths);
  if (states.length === 0) return [];
  const token = readToken(context.paths.adminToken);
  const reached: { pid: number; plugin: PluginStatus | undefined }[] = [];
  for (const state of states) {
    const endpoint = { url: state.adminUrl, token, tokenHint: `The admin token is read from ${context.paths.adminToken}.` };
    try {
      const result = await send(endpoint, new URL('plugins/sync', state.adminUrl).href, { method: 'POST', body: '{}' });
      const text = await readText(result.response);
      if (result.status === 404) {
        context.err(`capnode: the running host (pid ${state.pid}) loads plugins only at start; restart capnode serve to apply this`);
        continue;
      }
      if (result.status !== 200) {
        context.err(`capnode: the running host (pid ${state.pid}) did not apply the change (HTTP ${result.status}): ${text.slice(0, 500)}`);
        continue;
      }
      const plugins = (JSON.parse(text) as { plugins: PluginStatus[] }).plugins;
      reached.push({ pid: state.pid, plugin: plugins.find((plugin) => plugin.name === name || plugin.source === name) });
    } catch (error) {
      context.err(`capnode: could not reach the running host (pid ${state.pid}): ${(error as Error).message}; it applies this when it restarts`);
    }
  }
  return reached;
}

/** Each configured plugin's name and kind as this config directory resolves it (nothing is imported). */
function describe(host: HostModule, home: string, source: string): { source: string; name?: string; kind?: string; error?: string } {
  try {
    const resolved = host.resolvePluginSource(source, host.pluginsDirectory(home));
    return { source, name: resolved.name, kind: resolved.kind };
  } catch (error) {
    return { source, error: (error as Error).message };
  }
}

async function list(context: Context): Promise<number> {
  const host = await loadHost();
  const store = await openStore(context, host);
  const rows = store.get().plugins.map((source) => describe(host, context.paths.home, source));
  if (context.json) {
    context.out(JSON.stringify({ plugins: rows }, null, 2));
    return 0;
  }
  if (rows.length === 0) {
    context.out('no plugins configured — add one with: capnode plugins add <absolute path|package>');
    return 0;
  }
  for (const row of rows) context.out(row.error ? `${row.source}  (problem: ${row.error})` : `${row.name}  ${row.kind}  ${row.source}`);
  context.out('their load state and diagnostics: capnode status');
  return 0;
}

/** Runs npm with `args`; its output goes to stderr (stdout stays this command's). */
function npm(context: Context, args: readonly string[]): Promise<void> {
  const command = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  return new Promise((resolvePromise, reject) => {
    // npm writes files with the umask it inherits: 022, so what it installs is not group-writable (the host refuses that).
    const umask = process.platform === 'win32' ? undefined : process.umask(0o022);
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...context.env } as NodeJS.ProcessEnv, shell: process.platform === 'win32' });
    } finally {
      if (umask !== undefined) process.umask(umask);
    }
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => reject(new CliError('failure', `cannot run npm (${error.message}); install Node.js with npm, or add the plugin by its absolute path`)));
    child.on('close', (code) => (code === 0 ? resolvePromise() : reject(new CliError('failure', `npm ${args.join(' ')} failed (exit ${code}):\n${output.trim().slice(-2000)}`))));
  });
}

/** The npm prefix plugins install into, created with its own package.json so npm never walks up. */
function ensurePluginsPrefix(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) writeFileSync(manifest, `${JSON.stringify({ name: 'capnode-plugins', private: true, description: 'Plugins installed by capnode plugins add', dependencies: {} }, null, 2)}\n`);
  return manifest;
}

function dependencies(manifest: string): Record<string, string> {
  try {
    return (JSON.parse(readFileSync(manifest, 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {};
  } catch {
    return {};
  }
}

/** `name`, `@scope/name`, `name@range`, `@scope/name@range`: the package name part. */
function registryName(spec: string, host: HostModule): string | undefined {
  const at = spec.lastIndexOf('@');
  const name = at > 0 ? spec.slice(0, at) : spec;
  return host.isPackageName(name) ? name : undefined;
}

async function installPackage(context: Context, host: HostModule, spec: string): Promise<string> {
  const dir = host.pluginsDirectory(context.paths.home);
  const manifest = ensurePluginsPrefix(dir);
  const before = dependencies(manifest);
  context.err(`capnode: installing ${spec} into ${dir} (npm install --prefix)…`);
  await npm(context, ['install', '--prefix', dir, '--no-audit', '--no-fund', '--save', spec]);
  const after = dependencies(manifest);
  const name = Object.keys(after).find((key) => before[key] !== after[key]) ?? registryName(spec, host);
  if (name === undefined) throw new CliError('failure', `npm installed ${spec}, but which package it is cannot be told from ${manifest}; add it by name: capnode plugins add <name>`);
  return name;
}

async function add(context: Context, target: string): Promise<number> {
  const host = await loadHost();
  const store = await openStore(context, host);
  const tarball = /\.(tgz|tar\.gz)$/i.test(target);
  let source: string;
  if (!tarball && (isAbsolute(target) || target.startsWith('.') || target.includes('\\') || (target.includes('/') && !target.startsWith('@')))) {
    if (!isAbsolute(target)) throw new CliError('usage', `a plugin path must be absolute: capnode plugins add ${resolve(target)}`);
    if (!existsSync(target)) throw new CliError('failure', `${target} does not exist`);
    source = target;
  } else {
    if (tarball && !isAbsolute(target)) throw new CliError('usage', `a tarball path must be absolute: capnode plugins add ${resolve(target)}`);
    if (tarball && !statSync(target, { throwIfNoEntry: false })?.isFile()) throw new CliError('failure', `${target} does not exist`);
    if (!tarball && registryName(target, host) === undefined) throw new CliError('usage', `'${target}' is neither an absolute path nor a package name — ${USAGE}`);
    source = await installPackage(context, host, target);
  }
  const described = describe(host, context.paths.home, source);
  if (described.error) throw new CliError('failure', `${source} cannot be loaded as a plugin: ${described.error}`);
  const configured = (plugins: readonly string[]) => plugins.some((entry) => entry === source || describe(host, context.paths.home, entry).name === described.name);
  let already = configured(store.get().plugins);
  if (!already) {
    try {
      // Checked again under the settings lock: another process may have added it meanwhile.
      await store.update((settings) => ((already = configured(settings.plugins)) ? settings : { ...settings, plugins: [...settings.plugins, source] }));
    } catch (error) {
      hostFailure(error, host);
    }
  }
  context.out(`${already ? 'already configured' : 'added'}: plugin ${described.name} (${described.kind}, ${source})`);
  let code = 0;
  for (const { pid, plugin } of await applyToRunningHosts(context, described.name ?? source)) {
    if (plugin?.state === 'loaded') context.out(`loaded into the running host (pid ${pid}): ${plugin.commands.join(', ') || '(no commands)'}`);
    else {
      context.err(`capnode: plugin ${described.name} failed to load in the running host (pid ${pid}): ${plugin?.error ?? 'it is not among its plugins'}`);
      code = 1;
    }
  }
  return code;
}

async function remove(context: Context, name: string): Promise<number> {
  const host = await loadHost();
  const store = await openStore(context, host);
  const configured = store.get().plugins;
  const matches = configured.filter((entry) => entry === name || describe(host, context.paths.home, entry).name === name);
  if (matches.length === 0) {
    const names = configured.map((entry) => describe(host, context.paths.home, entry).name ?? entry);
    throw new CliError('failure', `no plugin '${name}' is configured${names.length ? ` (configured: ${names.join(', ')})` : ''}`);
  }
  try {
    await store.update((settings) => ({ ...settings, plugins: settings.plugins.filter((entry) => !matches.includes(entry)) }));
  } catch (error) {
    hostFailure(error, host);
  }
  const dir = host.pluginsDirectory(context.paths.home);
  for (const entry of matches) {
    if (!isAbsolute(entry) && host.isPackageName(entry) && existsSync(join(dir, 'node_modules', ...entry.split('/')))) {
      await npm(context, ['uninstall', '--prefix', dir, '--no-audit', '--no-fund', entry]);
    }
  }
  context.out(`removed: plugin ${name}`);
  for (const { pid, plugin } of await applyToRunningHosts(context, name)) {
    if (plugin === undefined) context.out(`unloaded from the running host (pid ${pid})`);
    else context.err(`capnode: the running host (pid ${pid}) still has plugin ${name} (${plugin.kind}: a built-in or --dev-plugin stays)`);
  }
  return 0;
}

/** `capnode --list-tools --markdown`: the stock host's command surface as Markdown, without a running host. */
export async function listToolsMarkdown(context: Context): Promise<number> {
  const host = await loadHost();
  context.out((await host.stockCommandsMarkdown()).trimEnd());
  return 0;
}
