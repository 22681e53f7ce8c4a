import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { dirname, extname } from 'node:path';
import { findExecutable } from '@capnode/capabilities/node';
import { HOME_ENV } from '@capnode/host/setup';
import { LAUNCHD_LABEL, SYSTEMD_UNIT_NAME, WINDOWS_TASK_NAME, serviceFile, type ServiceFile, type ServicePlatform } from '@capnode/host/setup';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';

const TOOL_TIMEOUT_MS = 15_000;

interface ToolRun {
  readonly ok: boolean;
  readonly output: string;
}

/** Runs a service manager tool (systemctl, launchctl, schtasks) without a shell. */
function runTool(file: string, args: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<ToolRun> {
  return new Promise((resolve) => {
    execFile(file, [...args], { env: env as NodeJS.ProcessEnv, timeout: TOOL_TIMEOUT_MS, windowsHide: true }, (error, stdout, stderr) => {
      const output = `${stdout}${stderr}`.trim().split('\n')[0]?.slice(0, 300) ?? '';
      resolve({ ok: !error, output: output || (error ? error.message : '') });
    });
  });
}

function platformOf(): ServicePlatform {
  if (process.platform === 'linux' || process.platform === 'darwin' || process.platform === 'win32') return process.platform;
  throw new CliError('failure', `capnode service supports Linux (systemd), macOS (launchd) and Windows (Task Scheduler), not ${process.platform}`);
}

/** The program to run at login: this CLI's `serve`, or the tray (`capnode-tray` from PATH). */
async function loginCommand(context: Context, tray: boolean): Promise<[string, ...string[]]> {
  if (!tray) return [process.execPath, realpathSync(process.argv[1] ?? ''), 'serve'];
  const found = await findExecutable('capnode-tray', { env: context.env as NodeJS.ProcessEnv });
  if (!found) throw new CliError('failure', 'capnode-tray is not on PATH — install the tray first (npm install -g @capnode/tray), then run capnode service install --tray again');
  const real = realpathSync(found);
  // npm links the bin to its .js file: run that with this Node, so the login session's PATH does not matter.
  return ['.js', '.mjs', '.cjs'].includes(extname(real)) ? [process.execPath, real] : [real];
}

async function buildFile(context: Context, platform: ServicePlatform, tray: boolean): Promise<ServiceFile> {
  const home = context.env[HOME_ENV];
  if (platform === 'win32' && home) throw new CliError('usage', `the Windows logon task cannot carry ${HOME_ENV}; unset it to use the default config directory (${context.paths.home} is used only when it is the default)`);
  const userHome = (platform === 'win32' ? context.env.USERPROFILE : context.env.HOME) || homedir();
  const domain = context.env.USERDOMAIN;
  const user = context.env.USERNAME ?? userInfo().username;
  const command = await loginCommand(context, tray);
  try {
    return serviceFile(
      platform,
      {
        command,
        graphical: tray,
        ...(home ? { env: { [HOME_ENV]: context.paths.home } } : {}),
        ...(platform === 'win32' && user ? { userId: domain ? `${domain}\\${user}` : user } : {}),
        ...(platform === 'darwin' ? { logFile: `${userHome}/Library/Logs/capnode.log` } : {}),
        description: tray ? 'capnode tray (the capnode host with a tray icon)' : 'capnode host (local MCP server and gateway node)',
      },
      { userHome, capnodeHome: context.paths.home, ...(context.env.XDG_CONFIG_HOME ? { xdgConfigHome: context.env.XDG_CONFIG_HOME } : {}) },
    );
  } catch (error) {
    // serviceFile refuses what the file cannot carry (a newline in CAPNODE_HOME, % for Task Scheduler).
    const { isHostError } = await import('@capnode/host');
    if (isHostError(error) && error.code === 'invalid_service') throw new CliError('usage', `cannot write the login service: ${error.message}`, { cause: error });
    throw error;
  }
}

/** The commands that register, start, stop and query the service, per platform. */
function managerSteps(platform: ServicePlatform, file: ServiceFile): { tool: string; enable: string[][]; disable: string[][]; query: string[][] } {
  if (platform === 'linux') {
    return {
      tool: 'systemctl',
      enable: [['--user', 'daemon-reload'], ['--user', 'enable', '--now', SYSTEMD_UNIT_NAME]],
      disable: [['--user', 'disable', '--now', SYSTEMD_UNIT_NAME], ['--user', 'daemon-reload']],
      query: [['--user', 'is-enabled', SYSTEMD_UNIT_NAME], ['--user', 'is-active', SYSTEMD_UNIT_NAME]],
    };
  }
  if (platform === 'darwin') {
    const domain = `gui/${process.getuid?.() ?? 501}`;
    return {
      tool: 'launchctl',
      enable: [['bootstrap', domain, file.path]],
      disable: [['bootout', `${domain}/${LAUNCHD_LABEL}`]],
      query: [['print', `${domain}/${LAUNCHD_LABEL}`]],
    };
  }
  return {
    tool: 'schtasks',
    enable: [['/Create', '/TN', WINDOWS_TASK_NAME, '/XML', file.path, '/F'], ['/Run', '/TN', WINDOWS_TASK_NAME]],
    disable: [['/End', '/TN', WINDOWS_TASK_NAME], ['/Delete', '/TN', WINDOWS_TASK_NAME, '/F']],
    query: [['/Query', '/TN', WINDOWS_TASK_NAME]],
  };
}

function shellLine(tool: string, steps: readonly string[][]): string {
  return steps.map((args) => [tool, ...args.map((arg) => (/^[\w./:=-]+$/.test(arg) ? arg : `"${arg.replace(/(["\\$`])/g, '\\$1')}"`))].join(' ')).join(' && ');
}

/** Runs `steps` with `tool` until one fails; `undefined` when all ran, else the failing step's output. */
async function runSteps(file: string, steps: readonly string[][], env: Context['env']): Promise<string | undefined> {
  for (const args of steps) {
    const run = await runTool(file, args, env);
    if (!run.ok) return run.output;
  }
  return undefined;
}

function writeServiceFile(file: ServiceFile): void {
  mkdirSync(dirname(file.path), { recursive: true });
  const bytes = file.encoding === 'utf16le' ? Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(file.text, 'utf16le')]) : Buffer.from(file.text, 'utf8');
  writeFileSync(file.path, bytes, { mode: 0o644 });
}

async function install(context: Context, platform: ServicePlatform, dryRun: boolean, tray: boolean): Promise<number> {
  const file = await buildFile(context, platform, tray);
  const steps = managerSteps(platform, file);
  if (dryRun) {
    context.err(`capnode: would write ${file.path}, then run: ${shellLine(steps.tool, steps.enable)}`);
    context.out(file.text.replace(/\r\n/g, '\n').trimEnd());
    return 0;
  }
  writeServiceFile(file);
  context.err(`capnode: wrote ${file.path}`);
  const tool = await findExecutable(steps.tool, { env: context.env as NodeJS.ProcessEnv });
  if (!tool) {
    context.err(`capnode: ${steps.tool} not found, so nothing was registered; to start capnode at login, run where ${steps.tool} exists: ${shellLine(steps.tool, steps.enable)}`);
    return 0;
  }
  const failure = await runSteps(tool, steps.enable, context.env);
  if (failure !== undefined) {
    context.err(`capnode: ${steps.tool} could not register it (${failure}); the file is in place — run this in your desktop session: ${shellLine(steps.tool, steps.enable)}`);
    return 1;
  }
  context.err(`capnode: registered — ${tray ? 'the tray' : 'the host'} starts at login (and runs now)`);
  return 0;
}

async function uninstall(context: Context, platform: ServicePlatform, dryRun: boolean): Promise<number> {
  const file = await buildFile(context, platform, false);
  const steps = managerSteps(platform, file);
  const present = existsSync(file.path);
  if (dryRun) {
    context.err(`capnode: would run ${shellLine(steps.tool, steps.disable)}${present ? `, then remove ${file.path}` : ` (${file.path} does not exist)`}`);
    return 0;
  }
  const tool = await findExecutable(steps.tool, { env: context.env as NodeJS.ProcessEnv });
  const failure = tool ? await runSteps(tool, steps.disable, context.env) : `${steps.tool} not found`;
  rmSync(file.path, { force: true });
  context.err(present ? `capnode: removed ${file.path}` : `capnode: ${file.path} was not installed`);
  if (failure !== undefined && present) context.err(`capnode: ${steps.tool} could not unregister it (${failure}); if it still runs, run: ${shellLine(steps.tool, steps.disable)}`);
  return 0;
}

async function status(context: Context, platform: ServicePlatform): Promise<number> {
  const file = await buildFile(context, platform, false);
  const steps = managerSteps(platform, file);
  const installed = existsSync(file.path);
  const tool = await findExecutable(steps.tool, { env: context.env as NodeJS.ProcessEnv });
  const manager: string[] = [];
  if (installed && tool) for (const args of steps.query) manager.push((await runTool(tool, args, context.env)).output);
  const command = installed ? (readFileSync(file.path, file.encoding === 'utf16le' ? 'utf16le' : 'utf8').match(/^ExecStart=(.*)$/m)?.[1] ?? undefined) : undefined;
  if (context.json) {
    context.out(JSON.stringify({ platform, path: file.path, installed, ...(command ? { command } : {}), manager: tool ? steps.tool : null, managerState: manager }, null, 2));
  } else {
    context.out(installed ? `installed: ${file.path}` : `not installed (capnode service install writes ${file.path})`);
    if (command) context.out(`runs: ${command}`);
    if (installed) context.out(tool ? `${steps.tool}: ${manager.join(', ')}` : `${steps.tool} not found: cannot tell whether it is registered`);
  }
  return installed ? 0 : 1;
}

/** `capnode service install [--tray] [--dry-run] | uninstall [--dry-run] | status [--json]`: start capnode at login. */
export async function service(context: Context): Promise<number> {
  const action = context.args.positionals[1];
  const dryRun = context.args.flags.has('dry-run');
  const tray = context.args.flags.has('tray');
  if (tray && action !== 'install') throw new CliError('usage', '--tray applies to capnode service install');
  if (dryRun && action === 'status') throw new CliError('usage', '--dry-run applies to install and uninstall');
  const platform = platformOf();
  switch (action) {
    case 'install':
      return install(context, platform, dryRun, tray);
    case 'uninstall':
      return uninstall(context, platform, dryRun);
    case 'status':
      return status(context, platform);
    default:
      throw new CliError('usage', `usage: capnode service install [--tray] [--dry-run] | uninstall | status${action ? ` (unknown action '${action}')` : ''}`);
  }
}
