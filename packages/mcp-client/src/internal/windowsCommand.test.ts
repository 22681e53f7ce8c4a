import { describe, expect, it } from 'vitest';
import { escapeCmdArgument, findWindowsExecutable, resolveWindowsCommand, shimScript, type WindowsCommandEnvironment } from './windowsCommand.js';

const NPX_CMD = `:: Created by npm, please don't edit manually.
@ECHO OFF
SETLOCAL
SET "NODE_EXE=%~dp0\\node.exe"
IF NOT EXIST "%NODE_EXE%" (
  SET "NODE_EXE=node"
)
SET "NPX_CLI_JS=%~dp0\\node_modules\\npm\\bin\\npx-cli.js"
"%NODE_EXE%" "%NPX_CLI_JS%" %*
`;

const CMD_SHIM = `@ECHO off
GOTO start
:find_dp0
SET dp0=%~dp0
EXIT /b
:start
SETLOCAL
CALL :find_dp0
IF EXIST "%dp0%\\node.exe" (
  SET "_prog=%dp0%\\node.exe"
) ELSE (
  SET "_prog=node"
  SET PATHEXT=%PATHEXT:;.JS;=;%
)
endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%"  "%dp0%\\node_modules\\@modelcontextprotocol\\server-everything\\dist\\index.js" %*
`;

/** A fake Windows machine: these files exist, with this content. */
function machine(files: Record<string, string>, env: Record<string, string> = {}): WindowsCommandEnvironment {
  const lower = new Map(Object.entries(files).map(([path, text]) => [path.toLowerCase(), text]));
  return {
    env: { PATH: 'C:\\Windows\\system32;C:\\Program Files\\nodejs', PATHEXT: '.COM;.EXE;.BAT;.CMD', COMSPEC: 'C:\\Windows\\system32\\cmd.exe', ...env },
    nodePath: 'C:\\Program Files\\nodejs\\node.exe',
    exists: (path) => lower.has(path.toLowerCase()),
    readFile: (path) => {
      const text = lower.get(path.toLowerCase());
      if (text === undefined) throw new Error(`ENOENT ${path}`);
      return text;
    },
  };
}

const hostile = ['-y', '@scope/pkg', 'a b', 'x&calc', '100%', '%PATH%', 'say "hi"', 'c:\\dir\\', '^caret', '|more', '<in', '>out', '!bang!'];

describe('Windows .cmd/.bat launchers', () => {
  it('finds npx as npx.cmd on PATH with PATHEXT', () => {
    const win = machine({ 'C:\\Program Files\\nodejs\\npx.cmd': NPX_CMD });
    expect(findWindowsExecutable('npx', win)).toBe('C:\\Program Files\\nodejs\\npx.cmd');
    expect(findWindowsExecutable('missing', win)).toBeUndefined();
  });

  it("resolves npm's npx.cmd to node and npx-cli.js, passing every argument untouched", () => {
    const win = machine({
      'C:\\Program Files\\nodejs\\npx.cmd': NPX_CMD,
      'C:\\Program Files\\nodejs\\node.exe': '',
      'C:\\Program Files\\nodejs\\node_modules\\npm\\bin\\npx-cli.js': '',
    });
    expect(resolveWindowsCommand('npx', hostile, win)).toEqual({
      command: 'C:\\Program Files\\nodejs\\node.exe',
      args: ['C:\\Program Files\\nodejs\\node_modules\\npm\\bin\\npx-cli.js', ...hostile],
      windowsVerbatimArguments: false,
    });
  });

  it('resolves a cmd-shim package launcher to its script', () => {
    const shim = 'C:\\Users\\me\\AppData\\Roaming\\npm\\mcp-server-everything.cmd';
    const script = 'C:\\Users\\me\\AppData\\Roaming\\npm\\node_modules\\@modelcontextprotocol\\server-everything\\dist\\index.js';
    expect(shimScript(shim, CMD_SHIM)).toBe(script);
    const win = machine({ [shim]: CMD_SHIM, [script]: '' }, { PATH: 'C:\\Users\\me\\AppData\\Roaming\\npm' });
    // No node.exe beside the shim: the running node.
    expect(resolveWindowsCommand('mcp-server-everything', ['stdio'], win)).toEqual({ command: 'C:\\Program Files\\nodejs\\node.exe', args: [script, 'stdio'], windowsVerbatimArguments: false });
  });

  it('runs any other batch file through cmd.exe with each argument quoted and every metacharacter escaped', () => {
    const win = machine({ 'C:\\tools\\run server.bat': '@echo off\r\nmyserver.exe %1 %2\r\n' }, { PATH: 'C:\\tools' });
    const resolved = resolveWindowsCommand('run server', ['a b', 'x&calc', '%PATH%', 'say "hi"'], win);
    expect(resolved.command).toBe('C:\\Windows\\system32\\cmd.exe');
    expect(resolved.windowsVerbatimArguments).toBe(true);
    expect(resolved.args.slice(0, 3)).toEqual(['/d', '/s', '/c']);
    const line = resolved.args[3]!;
    expect(line.startsWith('"') && line.endsWith('"')).toBe(true);
    // No unescaped metacharacter is left for cmd.exe to act on.
    expect(line.slice(1, -1).replace(/\^./g, '')).not.toMatch(/[&|<>%!"^()]/);
    expect(line).toContain('C:\\tools\\run^ server.bat');
  });

  it('escapes arguments per CommandLineToArgvW, then for cmd.exe (twice for batch files)', () => {
    expect(escapeCmdArgument('plain', false)).toBe('^"plain^"');
    expect(escapeCmdArgument('a b', false)).toBe('^"a^ b^"');
    expect(escapeCmdArgument('say "hi"', false)).toBe('^"say^ \\^"hi\\^"^"');
    expect(escapeCmdArgument('c:\\dir\\', false)).toBe('^"c:\\dir\\\\^"');
    expect(escapeCmdArgument('x&y', true)).toBe('^^^"x^^^&y^^^"');
    expect(() => escapeCmdArgument('two\nlines', true)).toThrow(/line breaks/);
  });

  it('leaves executables alone and an unresolvable command as given', () => {
    const win = machine({ 'C:\\Program Files\\nodejs\\node.exe': '' });
    expect(resolveWindowsCommand('node', ['a&b'], win)).toEqual({ command: 'C:\\Program Files\\nodejs\\node.exe', args: ['a&b'], windowsVerbatimArguments: false });
    expect(resolveWindowsCommand('nothing-here', ['x'], win)).toEqual({ command: 'nothing-here', args: ['x'], windowsVerbatimArguments: false });
  });
});
