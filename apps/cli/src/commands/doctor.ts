import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PluginStatus } from '@capnode/host';
import { DEFAULT_MCP_HOST, DEFAULT_MCP_PORT, readRuntimeState } from '@capnode/host/setup';
import { isCliError } from '../errors.js';
import { mcpEndpoint, mcpUrl, type Context } from '../context.js';
import { rpcCall } from '../rpc.js';
import { checkBackends, portOwner, probePort, tcpReachable } from './doctorProbes.js';

/** One line of `capnode doctor`. */
export interface Check {
  readonly id: string;
  readonly status: 'ok' | 'warn' | 'fail';
  readonly title: string;
  readonly detail: string;
  /** What to do about a warn or fail. */
  readonly fix?: string;
}

/** `GATEWAY_NODE_IDENTITY_FILE` and `OPERATOR_IDENTITY_FILE` of `@capnode/host`, spelled out so doctor does not load the host. */
const GATEWAY_NODE_IDENTITY_FILE = 'gateway-device.json';
const OPERATOR_IDENTITY_FILE = 'gateway-operator.json';

const ok = (id: string, title: string, detail: string): Check => ({ id, status: 'ok', title, detail });
const warn = (id: string, title: string, detail: string, fix: string): Check => ({ id, status: 'warn', title, detail, fix });
const fail = (id: string, title: string, detail: string, fix: string): Check => ({ id, status: 'fail', title, detail, fix });

const mode = (value: number) => `0${(value & 0o777).toString(8)}`;

/** A private file: missing is `ifMissing`; a symlink, another user's, or readable by group/others fails. */
function fileCheck(id: string, title: string, path: string, ifMissing: Check | undefined): Check | undefined {
  let stats;
  try {
    stats = lstatSync(path);
  } catch {
    return ifMissing;
  }
  if (stats.isSymbolicLink()) return fail(id, title, `${path} is a symlink`, `replace it with the real file (the host refuses symlinks)`);
  if (!stats.isFile()) return fail(id, title, `${path} is not a regular file`, `remove it`);
  if (typeof process.getuid === 'function' && stats.uid !== process.getuid()) return fail(id, title, `${path} belongs to another user (uid ${stats.uid})`, `run capnode as its owner, or remove it`);
  if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) return fail(id, title, `${path} has mode ${mode(stats.mode)}: others can read it`, `chmod 600 ${path}`);
  return ok(id, title, `${path} (${process.platform === 'win32' ? 'present' : mode(stats.mode)})`);
}

function fileChecks(context: Context): Check[] {
  const { paths } = context;
  const checks: Check[] = [];
  try {
    const home = lstatSync(paths.home);
    if (home.isSymbolicLink()) checks.push(fail('home', 'config directory', `${paths.home} is a symlink`, 'point CAPNODE_HOME at the real directory'));
    else if (process.platform !== 'win32' && (home.mode & 0o077) !== 0) checks.push(warn('home', 'config directory', `${paths.home} has mode ${mode(home.mode)}`, `chmod 700 ${paths.home} (the host narrows it on start)`));
    else checks.push(ok('home', 'config directory', paths.home));
  } catch {
    checks.push(warn('home', 'config directory', `${paths.home} does not exist yet`, 'capnode serve creates it on first start'));
  }
  const missingToken = (id: string, title: string, path: string) => warn(id, title, `${path} does not exist yet`, 'capnode serve (or capnode token show) creates it');
  for (const [id, title, path] of [
    ['mcp-token', 'MCP token', paths.mcpToken],
    ['admin-token', 'admin token', paths.adminToken],
  ] as const) {
    checks.push(fileCheck(id, title, path, missingToken(id, title, path))!);
  }
  const settings = fileCheck('settings', 'settings.json', paths.settings, ok('settings', 'settings.json', `${paths.settings} absent: the defaults apply`));
  if (settings?.status === 'fail' && /others can read/.test(settings.detail)) checks.push({ ...settings, status: 'warn', fix: `chmod 600 ${paths.settings} (the host narrows it on start; it may hold gateway.token)` });
  else if (settings) checks.push(settings);
  for (const name of [GATEWAY_NODE_IDENTITY_FILE, OPERATOR_IDENTITY_FILE]) {
    const check = fileCheck(name, `gateway identity ${name}`, join(paths.home, name), undefined);
    if (check) checks.push(check.status === 'fail' ? { ...check, fix: `${check.fix}, or delete it to create a new one` } : check);
  }
  return checks;
}

interface SettingsView {
  readonly valid: boolean;
  readonly error?: string;
  readonly host: string;
  readonly port: number;
  readonly gatewayUrl?: string;
  readonly gatewayEnabled: boolean;
  /** The file uses an old key (`node`, now `gateway`): read under the new one, rewritten by the host. */
  readonly oldKey?: string;
}

async function readSettingsView(context: Context): Promise<SettingsView> {
  const fallback = { host: DEFAULT_MCP_HOST, port: DEFAULT_MCP_PORT, gatewayEnabled: false };
  let text: string;
  try {
    text = readFileSync(context.paths.settings, 'utf8');
  } catch {
    return { valid: true, ...fallback };
  }
  const { parseSettings } = await import('@capnode/host/settings');
  try {
    let oldKey: string | undefined;
    const settings = parseSettings(text, context.paths.settings, { onWarning: (message) => (oldKey = message) });
    return { valid: true, ...(oldKey ? { oldKey } : {}), host: settings.mcp.host, port: settings.mcp.port, gatewayEnabled: settings.gateway.enabled, ...(settings.gateway.url ? { gatewayUrl: settings.gateway.url } : {}) };
  } catch (error) {
    return { valid: false, error: (error as Error).message, ...fallback };
  }
}

/** How long doctor waits for the host's `tools/list`. */
const HOST_TIMEOUT_MS = 3000;

/** The running host's plugins as `capnode status` shows them (best effort: `undefined` when it does not say). */
async function hostPlugins(context: Context): Promise<readonly PluginStatus[] | undefined> {
  try {
    const result = (await rpcCall(mcpEndpoint(context), 'tools/call', { name: 'app.status', arguments: {} }, { signal: AbortSignal.timeout(HOST_TIMEOUT_MS) })) as { structuredContent?: { plugins?: unknown } };
    const plugins = result.structuredContent?.plugins;
    return Array.isArray(plugins) ? (plugins as PluginStatus[]) : undefined;
  } catch {
    return undefined;
  }
}

/** One line per built-in plugin, from the running host's own availability: doctor and `status` agree by construction. */
function pluginBackendChecks(plugins: readonly PluginStatus[]): Check[] {
  return plugins
    .filter((plugin) => plugin.kind === 'builtin' && plugin.state === 'loaded')
    .map((plugin) => {
      const title = `${plugin.name} (${plugin.commands.join(', ')})`;
      if (plugin.unavailable.length === 0) return ok(`backend:${plugin.name}`, title, 'available on the running host');
      const installs = [...new Set(plugin.unavailable.map((missing) => missing.install))];
      const names = plugin.unavailable.map((missing) => missing.command).join(', ');
      return warn(`backend:${plugin.name}`, title, `unavailable on the running host: ${names}`, installs.map((install) => `install ${install}`).join('; '));
    });
}

async function hostChecks(context: Context, view: SettingsView): Promise<{ checks: Check[]; running: boolean; tools?: number; plugins?: readonly PluginStatus[] | undefined }> {
  const checks: Check[] = [];
  if (!view.valid) checks.push(fail('settings-valid', 'settings.json valid', view.error ?? 'invalid', 'fix the key it names, or delete the file to start from the defaults'));
  else if (view.oldKey) checks.push(warn('settings-valid', 'settings.json valid', view.oldKey, 'start the host once (it rewrites the file), or rename "node" to "gateway" yourself'));
  const url = mcpUrl(context);
  try {
    const listed = (await rpcCall(mcpEndpoint(context), 'tools/list', {}, { signal: AbortSignal.timeout(HOST_TIMEOUT_MS) })) as { tools?: unknown[] };
    checks.push(ok('host', 'host reachable', `${url} answers (${listed.tools?.length ?? 0} tools)`));
    return { checks, running: true, tools: listed.tools?.length ?? 0, plugins: await hostPlugins(context) };
  } catch (error) {
    if (isCliError(error) && error.code === 'unreachable') checks.push(warn('host', 'host reachable', `no host answers on ${url}`, 'start it: capnode serve (or the tray)'));
    else if (isCliError(error) && error.code === 'unauthorized') checks.push(fail('host', 'host reachable', `${url} refused the token (HTTP 401)`, 'the token file does not match the running host: run with the CAPNODE_HOME it uses'));
    else if (isCliError(error) && error.code === 'interrupted') checks.push(fail('host', 'host reachable', `${url} accepted the connection but did not answer within ${HOST_TIMEOUT_MS / 1000} s`, 'a stalled host or another program on that port: see capnode logs, restart the host'));
    else checks.push(fail('host', 'host reachable', `${url}: ${(error as Error).message}`, 'see capnode logs'));
    return { checks, running: false };
  }
}

async function portCheck(context: Context, view: SettingsView): Promise<Check> {
  const runtime = readRuntimeState(context.paths.runtime);
  const title = `port ${view.port}`;
  if (runtime?.url && new URL(runtime.url).port === String(view.port)) return ok('port', title, `in use by this capnode host (pid ${runtime.pid})`);
  const state = await probePort(view.host, view.port);
  if (state === 'free') return ok('port', title, `free on ${view.host}`);
  if (state === 'unavailable') return fail('port', title, `cannot bind ${view.host}`, 'set mcp.host to 127.0.0.1 in settings.json');
  const owner = portOwner(view.port);
  return fail('port', title, `in use by ${owner ?? 'another program'}${runtime ? '' : ' (not a capnode host of this config directory)'}`, `stop it, or pick another port: set mcp.port in ${context.paths.settings} (or capnode serve --port ${view.port + 1})`);
}

async function clientChecks(context: Context, running: boolean): Promise<Check[]> {
  const { findClientConfigs, listClientTokens, readClientToken } = await import('@capnode/host/setup');
  const url = mcpUrl(context);
  // Every token the host accepts (`default` and each client's own): an entry with any of them is current.
  let tokens: string[] = [];
  const checks: Check[] = [];
  try {
    // A refused entry of mcp-tokens.json is named (never its token), with the fix.
    const onWarning = (message: string) => checks.push(warn('tokens', 'client tokens', message, `fix or remove that entry, or capnode token revoke <name> and capnode token add <name>`));
    tokens = listClientTokens(context.paths, { onWarning })
      .map((info) => readClientToken(context.paths, info.name))
      .filter((value): value is string => value !== undefined);
  } catch (error) {
    checks.push(fail('tokens', 'client tokens', (error as Error).message, 'see the message: the host refuses to start until it is fixed'));
    tokens = [];
  }
  const files = await findClientConfigs({ url, env: context.env, ...(tokens.length > 0 ? { token: tokens } : {}) });
  for (const file of files) {
    const title = `${file.id} ${file.path}`;
    if (file.state === 'unreadable') {
      checks.push(warn(`client:${file.id}`, title, file.error ?? 'unreadable', 'fix the file; capnode config --write refuses it until then'));
      continue;
    }
    for (const entry of file.entries.filter((item) => item.pointsHere || item.name === 'capnode')) {
      if (!entry.pointsHere) checks.push(warn(`client:${file.id}`, title, `"${entry.name}" points at ${entry.url ?? 'another command'}, not this host (${url})`, `capnode config ${file.id} --write`));
      else if (entry.tokenCurrent === false) checks.push(fail(`client:${file.id}`, title, `"${entry.name}" points here with an old token (rotated since?)`, `capnode config ${file.id} --write`));
      else checks.push(ok(`client:${file.id}`, title, `"${entry.name}" → this host${entry.url ? ` (${entry.url})` : ' (capnode mcp)'}`));
    }
  }
  if (!checks.some((check) => check.status === 'ok' && check.id !== 'tokens')) {
    checks.push(warn('clients', 'client configs', `no client config on this machine points at this host${running ? '' : ' (checked for the default URL)'}`, 'connect one: capnode config claude|claude-desktop|cursor|vscode --write'));
  }
  return checks;
}

async function gatewayCheck(view: SettingsView): Promise<Check | undefined> {
  if (!view.gatewayUrl) return view.gatewayEnabled ? fail('gateway', 'gateway', 'gateway.enabled is true but gateway.url is missing', 'set gateway.url in settings.json, e.g. ws://127.0.0.1:18789') : undefined;
  const reachable = await tcpReachable(view.gatewayUrl, 3000);
  if (reachable === true) return ok('gateway', 'gateway reachable', `${view.gatewayUrl} accepts connections`);
  return (view.gatewayEnabled ? fail : warn)('gateway', 'gateway reachable', `${view.gatewayUrl}: ${reachable}`, 'start the gateway, or fix gateway.url in settings.json (state: capnode gateway status)');
}

/** Every check, in order: files, host, port, client configs, gateway, capability backends. */
export async function runChecks(context: Context): Promise<Check[]> {
  const view = await readSettingsView(context);
  const host = await hostChecks(context, view);
  const checks = [...fileChecks(context), ...host.checks];
  if (!host.running) checks.push(await portCheck(context, view));
  else {
    // The port the host really listens on (the runtime file), which --port may have set apart from settings.
    const port = new URL(mcpUrl(context)).port || String(view.port);
    checks.push(ok('port', `port ${port}`, 'in use by the running host'));
  }
  checks.push(...(await clientChecks(context, host.running)));
  const gateway = await gatewayCheck(view);
  if (gateway) checks.push(gateway);
  const local = await checkBackends(context.env, host.plugins === undefined ? 'all' : 'programs');
  checks.push(...local.map((backend) => (backend.found ? ok(`backend:${backend.name}`, backend.title, backend.found) : warn(`backend:${backend.name}`, backend.title, backend.missing ?? 'not found on PATH', backend.install))));
  if (host.plugins) checks.push(...pluginBackendChecks(host.plugins));
  return checks;
}

/** `capnode doctor [--json]`: one line per check with ok/warn/fail and a fix; exit 1 when any failed. */
export async function doctor(context: Context): Promise<number> {
  const checks = await runChecks(context);
  const failed = checks.some((check) => check.status === 'fail');
  if (context.json) {
    context.out(JSON.stringify({ ok: !failed, checks }, null, 2));
    return failed ? 1 : 0;
  }
  const label = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;
  for (const check of checks) {
    context.out(`${label[check.status]}  ${check.title}: ${check.detail}`);
    if (check.fix) context.out(`      fix: ${check.fix}`);
  }
  const counts = (['fail', 'warn'] as const).map((status) => `${checks.filter((check) => check.status === status).length} ${status === 'fail' ? 'failed' : 'warnings'}`);
  context.out(`\n${checks.length} checks, ${counts.join(', ')}`);
  return failed ? 1 : 0;
}
