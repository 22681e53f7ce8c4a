import { join, posix, win32 } from 'node:path';
import { HostError } from '../errors.js';

export type { HostErrorCode } from '../errors.js';
export { HostError, isHostError } from '../errors.js';

/**
 * Start-at-login files for the capnode host (or the tray): a systemd user unit (Linux), a launchd
 * agent (macOS), a Task Scheduler logon task (Windows). Pure: options in, file text out; the CLI's
 * `capnode service` writes and registers them. What a file cannot carry is refused with a
 * {@link HostError} `invalid_service` (the message names the value), never written half-escaped.
 */

/** The platforms a login service exists for. */
export type ServicePlatform = 'linux' | 'darwin' | 'win32';

/** systemd unit name (`~/.config/systemd/user/capnode.service`). */
export const SYSTEMD_UNIT_NAME = 'capnode.service';
/** launchd label (`~/Library/LaunchAgents/dev.capnode.host.plist`). */
export const LAUNCHD_LABEL = 'dev.capnode.host';
/** Task Scheduler task name (`\capnode`). */
export const WINDOWS_TASK_NAME = 'capnode';

export interface ServiceOptions {
  /** The program and its arguments, e.g. `[process.execPath, '/…/capnode/dist/bin.js', 'serve']`; absolute program path. */
  readonly command: readonly [string, ...string[]];
  /** Environment the service runs with (e.g. `CAPNODE_HOME`); systemd and launchd only. */
  readonly env?: Readonly<Record<string, string>>;
  /** The tray: started with the desktop session (systemd `graphical-session.target`, launchd `Interactive`). */
  readonly graphical?: boolean;
  /** One line for people. Default "capnode host (local MCP server and gateway node)". */
  readonly description?: string;
}

export interface LaunchdOptions extends ServiceOptions {
  /** Where stdout and stderr go. Default none (launchd discards them). */
  readonly logFile?: string;
}

export interface WindowsTaskOptions extends Omit<ServiceOptions, 'env'> {
  /** `DOMAIN\user` whose logon starts the task; without it, any user's logon (needs admin rights). */
  readonly userId?: string;
}

/** Where the service file goes for `platform`. */
export interface ServiceLocationOptions {
  /** The user's home directory. */
  readonly userHome: string;
  /** `XDG_CONFIG_HOME` (Linux). */
  readonly xdgConfigHome?: string;
  /** The capnode config directory (Windows keeps the task XML there). */
  readonly capnodeHome: string;
}

const DEFAULT_DESCRIPTION = 'capnode host (local MCP server and gateway node)';

function refuseControl(value: string, what: string): string {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new HostError('invalid_service', `${what} contains a control character (newline, tab, NUL): ${JSON.stringify(value)}`);
  return value;
}

function checkCommand(command: readonly string[], isAbsolute: (path: string) => boolean): void {
  if (command.length === 0 || !command[0]) throw new HostError('invalid_service', 'the service command needs a program');
  if (!isAbsolute(command[0])) throw new HostError('invalid_service', `the service program must be an absolute path, not '${command[0]}' (login sessions have their own PATH)`);
  command.forEach((part, index) => refuseControl(part, `service argument ${index}`));
}

function checkEnv(env: Readonly<Record<string, string>> = {}): [string, string][] {
  return Object.entries(env).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new HostError('invalid_service', `invalid environment variable name '${name}'`);
    return [name, refuseControl(value, `environment variable ${name}`)];
  });
}

/**
 * One word of a systemd unit line, double-quoted: `\` and `"` escaped, `%` doubled (specifiers);
 * with `command`, `$` doubled too (ExecStart expands `$VAR` in its arguments).
 */
export function systemdQuote(value: string, options: { readonly command?: boolean } = {}): string {
  let escaped = refuseControl(value, 'a systemd value').replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%');
  if (options.command) escaped = escaped.replace(/\$/g, '$$$$');
  return `"${escaped}"`;
}

/**
 * The `ExecStart=` words: systemd refuses quotes and backslashes in the executable's path ("special
 * characters") and does not expand `$` there, so such a program runs through `/usr/bin/env`, as an
 * argument (where every character can be escaped).
 */
function execStart(command: readonly string[]): string {
  const [program, ...args] = command as [string, ...string[]];
  const words = /["'\\]/.test(program) ? ['/usr/bin/env', program, ...args] : [program, ...args];
  return [systemdQuote(words[0]!), ...words.slice(1).map((word) => systemdQuote(word, { command: true }))].join(' ');
}

/** A systemd user unit that runs `command` at login and restarts it after a failure. */
export function systemdUnit(options: ServiceOptions): string {
  checkCommand(options.command, posix.isAbsolute);
  const env = checkEnv(options.env);
  const target = options.graphical ? 'graphical-session.target' : 'default.target';
  return [
    '[Unit]',
    `Description=${refuseControl(options.description ?? DEFAULT_DESCRIPTION, 'the description').replace(/%/g, '%%')}`,
    ...(options.graphical ? ['PartOf=graphical-session.target', 'After=graphical-session.target'] : []),
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${execStart(options.command)}`,
    ...env.map(([name, value]) => `Environment=${systemdQuote(`${name}=${value}`)}`),
    'Restart=on-failure',
    'RestartSec=5',
    '',
    '[Install]',
    `WantedBy=${target}`,
    '',
  ].join('\n');
}

/** Text as XML character data or attribute value. */
export function xmlEscape(value: string): string {
  return refuseControl(value, 'an XML value').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/** A launchd agent that runs `command` at login (RunAtLoad) and again after a crash. */
export function launchdPlist(options: LaunchdOptions): string {
  checkCommand(options.command, posix.isAbsolute);
  const env = checkEnv(options.env);
  const string = (value: string) => `<string>${xmlEscape(value)}</string>`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    '<dict>',
    `  <key>Label</key>${string(LAUNCHD_LABEL)}`,
    `  <key>ProgramArguments</key>`,
    '  <array>',
    ...options.command.map((part) => `    ${string(part)}`),
    '  </array>',
    ...(env.length > 0 ? ['  <key>EnvironmentVariables</key>', '  <dict>', ...env.map(([name, value]) => `    <key>${xmlEscape(name)}</key>${string(value)}`), '  </dict>'] : []),
    '  <key>RunAtLoad</key><true/>',
    '  <key>KeepAlive</key>',
    '  <dict><key>SuccessfulExit</key><false/></dict>',
    `  <key>ProcessType</key>${string(options.graphical ? 'Interactive' : 'Background')}`,
    ...(options.logFile ? [`  <key>StandardOutPath</key>${string(options.logFile)}`, `  <key>StandardErrorPath</key>${string(options.logFile)}`] : []),
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}

/**
 * One argument as the Windows C runtime parses a command line (CommandLineToArgvW): quoted when it
 * has spaces, tabs or quotes (or is empty), `"` as `\"`, backslashes before a quote doubled.
 */
export function windowsQuoteArg(value: string): string {
  refuseControl(value, 'a Windows argument');
  if (value !== '' && !/[\s"]/.test(value)) return value;
  let quoted = '"';
  let backslashes = 0;
  for (const char of value) {
    if (char === '\\') {
      backslashes++;
      continue;
    }
    quoted += char === '"' ? `${'\\'.repeat(backslashes * 2 + 1)}"` : `${'\\'.repeat(backslashes)}${char}`;
    backslashes = 0;
  }
  return `${quoted}${'\\'.repeat(backslashes * 2)}"`;
}

/**
 * A Task Scheduler task (XML, schema 1.2) that runs `command` at the user's logon, without a time
 * limit, restarting after failures. Task Scheduler expands `%VAR%` in the command and its arguments
 * and has no escape for `%`, so a `%` in them is refused.
 */
export function windowsLogonTask(options: WindowsTaskOptions): string {
  checkCommand(options.command, win32.isAbsolute);
  const percent = options.command.find((part) => part.includes('%'));
  if (percent !== undefined) throw new HostError('invalid_service', `'${percent}' contains %, which Task Scheduler would expand as an environment variable`);
  const [program, ...args] = options.command;
  const user = options.userId === undefined ? '' : `<UserId>${xmlEscape(options.userId)}</UserId>`;
  return [
    '<?xml version="1.0" encoding="UTF-16"?>',
    '<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">',
    `  <RegistrationInfo><Description>${xmlEscape(options.description ?? DEFAULT_DESCRIPTION)}</Description><URI>\\${WINDOWS_TASK_NAME}</URI></RegistrationInfo>`,
    `  <Triggers><LogonTrigger><Enabled>true</Enabled>${user}</LogonTrigger></Triggers>`,
    `  <Principals><Principal id="Author">${user}<LogonType>InteractiveToken</LogonType><RunLevel>LeastPrivilege</RunLevel></Principal></Principals>`,
    '  <Settings>',
    '    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>',
    '    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>',
    '    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>',
    '    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>',
    '    <RestartOnFailure><Interval>PT1M</Interval><Count>3</Count></RestartOnFailure>',
    '    <Enabled>true</Enabled>',
    '  </Settings>',
    '  <Actions Context="Author">',
    `    <Exec><Command>${xmlEscape(program)}</Command>${args.length > 0 ? `<Arguments>${xmlEscape(args.map(windowsQuoteArg).join(' '))}</Arguments>` : ''}</Exec>`,
    '  </Actions>',
    '</Task>',
    '',
  ].join('\r\n');
}

/** Where the login service file of `platform` lives. */
export function servicePath(platform: ServicePlatform, location: ServiceLocationOptions): string {
  switch (platform) {
    case 'linux':
      return join(location.xdgConfigHome || join(location.userHome, '.config'), 'systemd', 'user', SYSTEMD_UNIT_NAME);
    case 'darwin':
      return join(location.userHome, 'Library', 'LaunchAgents', `${LAUNCHD_LABEL}.plist`);
    case 'win32':
      return win32.join(location.capnodeHome, 'logon-task.xml');
  }
}

/** The file a login service is: where it goes, its text, and its encoding (Task Scheduler reads UTF-16 with a BOM). */
export interface ServiceFile {
  readonly platform: ServicePlatform;
  readonly path: string;
  readonly text: string;
  readonly encoding: 'utf8' | 'utf16le';
}

/**
 * The login service file for `platform`; Windows ignores `env` (the CLI refuses it there).
 * @throws HostError `invalid_service` for a value the file cannot carry.
 */
export function serviceFile(platform: ServicePlatform, options: LaunchdOptions & WindowsTaskOptions, location: ServiceLocationOptions): ServiceFile {
  const path = servicePath(platform, location);
  if (platform === 'linux') return { platform, path, text: systemdUnit(options), encoding: 'utf8' };
  if (platform === 'darwin') return { platform, path, text: launchdPlist(options), encoding: 'utf8' };
  const { env: _env, ...windows } = options;
  return { platform, path, text: windowsLogonTask(windows), encoding: 'utf16le' };
}
