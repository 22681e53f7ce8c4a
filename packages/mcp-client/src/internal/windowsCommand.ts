import { existsSync, readFileSync } from 'node:fs';
import { win32 } from 'node:path';

// Windows `.cmd`/`.bat` launchers (npx.cmd, npm package shims): Node cannot spawn them without a
// shell, and `shell: true` hands the arguments to cmd.exe unescaped, which splits them at spaces and
// interprets `&`, `|`, `%VAR%`, `^`. Resolved here to the node script behind the shim when it can
// be read, else run through cmd.exe with every argument escaped by cmd.exe's rules.

/** What to spawn instead of the configured command. */
export interface ResolvedCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** Set for cmd.exe: the command line is already quoted and escaped. */
  readonly windowsVerbatimArguments: boolean;
}

/** What {@link resolveWindowsCommand} reads; tests pass fakes (it runs on every platform). */
export interface WindowsCommandEnvironment {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The node binary for scripts behind a shim when the shim has none beside it. */
  readonly nodePath: string;
  exists(path: string): boolean;
  readFile(path: string): string;
}

const defaultEnvironment = (env: Readonly<Record<string, string | undefined>>): WindowsCommandEnvironment => ({
  env,
  nodePath: process.execPath,
  exists: (path) => existsSync(path),
  readFile: (path) => readFileSync(path, 'utf8'),
});

/** cmd.exe metacharacters, escaped with `^` (the set cross-spawn uses). */
const META = /([()\][%!^"`<>&|;, *?])/g;

function envValue(env: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const key = Object.keys(env).find((candidate) => candidate.toUpperCase() === name);
  return key === undefined ? undefined : env[key];
}

/** The file `command` names, searched on PATH with PATHEXT like cmd.exe does; `undefined` if none. */
export function findWindowsExecutable(command: string, environment: WindowsCommandEnvironment): string | undefined {
  const extensions = (envValue(environment.env, 'PATHEXT') ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean);
  const hasExtension = win32.extname(command) !== '';
  const candidates = (base: string) => (hasExtension ? [base] : extensions.map((ext) => `${base}${ext.toLowerCase()}`));
  if (/[\\/:]/.test(command)) return candidates(command).find((path) => environment.exists(path));
  const dirs = (envValue(environment.env, 'PATH') ?? '').split(';').filter(Boolean);
  for (const dir of dirs) {
    const found = candidates(win32.join(dir.replace(/^"|"$/g, ''), command)).find((path) => environment.exists(path));
    if (found) return found;
  }
  return undefined;
}

/**
 * The node script an npm/cmd-shim launcher runs with the caller's arguments (`%*`), or `undefined`
 * when the file does not look like one. Handles `"%dp0%\node_modules\…\cli.js" %*` (cmd-shim) and
 * `SET "NPX_CLI_JS=%~dp0\…"` … `"%NODE_EXE%" "%NPX_CLI_JS%" %*` (npm's own npx.cmd/npm.cmd).
 */
export function shimScript(shimPath: string, text: string): string | undefined {
  const dir = win32.dirname(shimPath);
  const expand = (value: string) => value.replace(/%~dp0%?|%dp0%/gi, `${dir}\\`);
  const line = text.split(/\r?\n/).find((candidate) => /%\*\s*$/.test(candidate));
  if (!line) return undefined;
  const tokens = [...line.matchAll(/"([^"]+)"/g)].map((match) => match[1]!);
  let script = tokens.at(-1);
  if (script === undefined) return undefined;
  const variable = /^%(\w+)%$/.exec(script);
  if (variable) {
    const set = new RegExp(`^\\s*SET\\s+"${variable[1]}=([^"]+)"`, 'im').exec(text);
    if (!set) return undefined;
    script = set[1]!;
  }
  if (!/\.[cm]?js$/i.test(script) || /%(?!~?dp0)/i.test(script.replace(/%~dp0%?|%dp0%/gi, ''))) return undefined;
  return win32.normalize(expand(script));
}

/** One argument quoted for CommandLineToArgvW, then its cmd.exe metacharacters escaped (twice for batch files). */
export function escapeCmdArgument(arg: string, batch: boolean): string {
  if (/[\r\n\0]/.test(arg)) throw new Error('an argument for a Windows .cmd/.bat launcher must not contain line breaks or NUL');
  let quoted = arg.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\*)$/, '$1$1');
  quoted = `"${quoted}"`.replace(META, '^$1');
  return batch ? quoted.replace(META, '^$1') : quoted;
}

/** The command itself escaped for cmd.exe (metacharacters only: it must stay one word). */
function escapeCmdCommand(command: string): string {
  return command.replace(META, '^$1');
}

/**
 * How to spawn `command args` on Windows without a shell splitting or interpreting the arguments:
 * executables as they are; `.cmd`/`.bat` launchers as `node <script>` when the script behind the
 * shim can be read, else as `cmd.exe /d /s /c "<escaped line>"` with verbatim arguments.
 */
export function resolveWindowsCommand(command: string, args: readonly string[], environment: WindowsCommandEnvironment | Readonly<Record<string, string | undefined>> = process.env): ResolvedCommand {
  const ctx = 'exists' in environment && typeof environment.exists === 'function' ? (environment as WindowsCommandEnvironment) : defaultEnvironment(environment as Readonly<Record<string, string | undefined>>);
  const found = findWindowsExecutable(command, ctx);
  if (!found || !/\.(cmd|bat)$/i.test(found)) return { command: found ?? command, args: [...args], windowsVerbatimArguments: false };
  let text: string | undefined;
  try {
    text = ctx.readFile(found);
  } catch {
    text = undefined;
  }
  const script = text === undefined ? undefined : shimScript(found, text);
  if (script !== undefined && ctx.exists(script)) {
    const beside = win32.join(win32.dirname(found), 'node.exe');
    return { command: ctx.exists(beside) ? beside : ctx.nodePath, args: [script, ...args], windowsVerbatimArguments: false };
  }
  const line = [escapeCmdCommand(found), ...args.map((arg) => escapeCmdArgument(arg, true))].join(' ');
  return { command: envValue(ctx.env, 'COMSPEC') ?? 'cmd.exe', args: ['/d', '/s', '/c', `"${line}"`], windowsVerbatimArguments: true };
}
