import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HostError, isHostError, launchdPlist, serviceFile, servicePath, systemdQuote, systemdUnit, windowsLogonTask, windowsQuoteArg, xmlEscape } from './service.js';

const awkward = '/home/a b/"quoted" 100% $HOME\\x';
const hasSystemdAnalyze = spawnSync('sh', ['-c', 'command -v systemd-analyze']).status === 0;

describe('systemd user unit', () => {
  it('runs the command at login and restarts it after a failure', () => {
    const unit = systemdUnit({ command: ['/usr/bin/node', '/opt/capnode/dist/bin.js', 'serve'] });
    expect(unit).toBe(
      [
        '[Unit]',
        'Description=capnode host (local MCP server and gateway node)',
        '',
        '[Service]',
        'Type=simple',
        'ExecStart="/usr/bin/node" "/opt/capnode/dist/bin.js" "serve"',
        'Restart=on-failure',
        'RestartSec=5',
        '',
        '[Install]',
        'WantedBy=default.target',
        '',
      ].join('\n'),
    );
  });

  it('quotes paths with spaces, quotes, backslashes, % and $; the environment line too', () => {
    const unit = systemdUnit({ command: ['/usr/bin/node', `${awkward}/bin.js`, 'serve'], env: { CAPNODE_HOME: awkward } });
    expect(unit).toContain('ExecStart="/usr/bin/node" "/home/a b/\\"quoted\\" 100%% $$HOME\\\\x/bin.js" "serve"');
    // Environment= does not expand $, so it is left single; % is a specifier there too.
    expect(unit).toContain('Environment="CAPNODE_HOME=/home/a b/\\"quoted\\" 100%% $HOME\\\\x"');
    expect(systemdQuote('a%b')).toBe('"a%%b"');
    // The executable itself: % doubled, $ left alone (never expanded there); quotes or backslashes go through /usr/bin/env.
    expect(systemdUnit({ command: ['/opt/a b/100% $x/node', 'serve'] })).toContain('ExecStart="/opt/a b/100%% $x/node" "serve"');
    expect(systemdUnit({ command: ['/opt/"q"/node', 'serve'] })).toContain('ExecStart="/usr/bin/env" "/opt/\\"q\\"/node" "serve"');
    expect(systemdUnit({ command: ['/opt/back\\slash/node'] })).toContain('ExecStart="/usr/bin/env" "/opt/back\\\\slash/node"');
    expect(systemdQuote('$X', { command: true })).toBe('"$$X"');
  });

  it('the tray variant belongs to the graphical session', () => {
    const unit = systemdUnit({ command: ['/usr/bin/capnode-tray'], graphical: true, description: 'capnode tray' });
    expect(unit).toContain('PartOf=graphical-session.target');
    expect(unit).toContain('After=graphical-session.target');
    expect(unit).toContain('WantedBy=graphical-session.target');
  });

  it('refuses what a unit file cannot carry: newlines, relative programs, bad variable names', () => {
    expect(() => systemdUnit({ command: ['/usr/bin/node', 'a\nExecStartPre=/bin/rm -rf ~'] })).toThrow(/control character/);
    expect(() => systemdUnit({ command: ['node', 'x'] })).toThrow(/absolute path/);
    expect(() => systemdUnit({ command: ['/usr/bin/node'], env: { 'A=B': 'x' } })).toThrow(/invalid environment variable name/);
    expect(() => systemdUnit({ command: ['/usr/bin/node'], env: { CAPNODE_HOME: 'x\ny' } })).toThrow(/control character/);
  });

  it('every refusal is a HostError invalid_service (callers branch on the code), in every generator', () => {
    const refusals: (() => unknown)[] = [
      () => systemdUnit({ command: ['/usr/bin/node', 'a\nb'] }),
      () => systemdUnit({ command: ['node'] }),
      () => systemdUnit({ command: [''] }),
      () => systemdUnit({ command: ['/usr/bin/node'], env: { '1X': 'x' } }),
      () => launchdPlist({ command: ['/x', 'a\u0001'] }),
      () => launchdPlist({ command: ['/x'], env: { CAPNODE_HOME: 'a\tb' } }),
      () => windowsLogonTask({ command: ['node.exe'] }),
      () => windowsLogonTask({ command: ['C:\\node.exe', '100%'] }),
      () => serviceFile('linux', { command: ['/usr/bin/node'], env: { CAPNODE_HOME: '/home/u/x\ny' } }, { userHome: '/home/u', capnodeHome: '/home/u/x' }),
    ];
    for (const refuse of refusals) {
      let thrown: unknown;
      try {
        refuse();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(HostError);
      expect(isHostError(thrown) && thrown.code).toBe('invalid_service');
      expect(thrown).not.toBeInstanceOf(TypeError);
    }
  });

  it.runIf(hasSystemdAnalyze)('passes systemd-analyze verify, awkward paths and all', () => {
    const dir = mkdtempSync(join(tmpdir(), 'capnode-unit-'));
    try {
      const programs = ['my "node" dir', 'my 100% $dir'].map((name) => {
        mkdirSync(join(dir, name));
        const program = join(dir, name, 'node');
        copyFileSync(process.execPath, program);
        chmodSync(program, 0o755);
        return program;
      });
      for (const [name, program, graphical] of [['capnode.service', programs[0]!, false], ['capnode-tray.service', programs[1]!, true]] as const) {
        const file = join(dir, name);
        writeFileSync(file, systemdUnit({ command: [program, `${awkward}/bin.js`, 'serve'], env: { CAPNODE_HOME: awkward }, graphical }));
        const result = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
        expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
      }
      // The check bites: a unit with a broken quote or a missing program fails.
      writeFileSync(join(dir, 'broken.service'), '[Service]\nExecStart="/usr/bin/node" "unterminated\n');
      expect(spawnSync('systemd-analyze', ['verify', join(dir, 'broken.service')], { encoding: 'utf8' }).status).not.toBe(0);
      writeFileSync(join(dir, 'missing.service'), systemdUnit({ command: [join(dir, 'no-such-node')] }));
      expect(spawnSync('systemd-analyze', ['verify', join(dir, 'missing.service')], { encoding: 'utf8' }).status).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('launchd agent', () => {
  it('runs at load, restarts after a crash, escapes XML', () => {
    const plist = launchdPlist({ command: ['/usr/local/bin/node', '/Users/a b/<&>"\'/bin.js', 'serve'], env: { CAPNODE_HOME: '/Users/a b/x&y' }, logFile: '/Users/a b/Library/Logs/capnode.log' });
    expect(plist).toContain('<key>Label</key><string>dev.capnode.host</string>');
    expect(plist).toContain('    <string>/Users/a b/&lt;&amp;&gt;&quot;&apos;/bin.js</string>');
    expect(plist).toContain('<key>CAPNODE_HOME</key><string>/Users/a b/x&amp;y</string>');
    expect(plist).toContain('<key>RunAtLoad</key><true/>');
    expect(plist).toContain('<dict><key>SuccessfulExit</key><false/></dict>');
    expect(plist).toContain('<key>ProcessType</key><string>Background</string>');
    expect(plist).toContain('<key>StandardErrorPath</key><string>/Users/a b/Library/Logs/capnode.log</string>');
    expect(launchdPlist({ command: ['/usr/local/bin/capnode-tray'], graphical: true })).toContain('<string>Interactive</string>');
    expect(launchdPlist({ command: ['/usr/local/bin/capnode-tray'] })).not.toContain('EnvironmentVariables');
    expect(() => launchdPlist({ command: ['/x', 'a\u0001'] })).toThrow(/control character/);
    expect(xmlEscape(`<a href="x">&'`)).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&apos;');
  });

  it('is well-formed XML (xmllint, when present)', () => {
    const lint = spawnSync('sh', ['-c', 'command -v xmllint']);
    if (lint.status !== 0) return;
    const result = spawnSync('xmllint', ['--noout', '-'], { input: launchdPlist({ command: ['/usr/local/bin/node', '/a b/<&>/bin.js'] }), encoding: 'utf8' });
    expect(result.status).toBe(0);
  });
});

describe('Windows logon task', () => {
  it('quotes arguments the way the C runtime splits them', () => {
    expect(windowsQuoteArg('serve')).toBe('serve');
    expect(windowsQuoteArg('')).toBe('""');
    expect(windowsQuoteArg('C:\\Program Files\\capnode\\bin.js')).toBe('"C:\\Program Files\\capnode\\bin.js"');
    expect(windowsQuoteArg('say "hi"')).toBe('"say \\"hi\\""');
    expect(windowsQuoteArg('C:\\dir with space\\')).toBe('"C:\\dir with space\\\\"');
    expect(windowsQuoteArg('a\\"b c')).toBe('"a\\\\\\"b c"');
    expect(windowsQuoteArg('C:\\no\\spaces\\')).toBe('C:\\no\\spaces\\');
  });

  it('starts at the user\'s logon, without a time limit, with the command and XML-escaped arguments', () => {
    const xml = windowsLogonTask({ command: ['C:\\Program Files\\nodejs\\node.exe', 'C:\\Users\\A & B\\capnode\\bin.js', 'serve'], userId: 'PC\\A & B' });
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-16"?>\r\n<Task version="1.2"')).toBe(true);
    expect(xml).toContain('<LogonTrigger><Enabled>true</Enabled><UserId>PC\\A &amp; B</UserId></LogonTrigger>');
    expect(xml).toContain('<LogonType>InteractiveToken</LogonType><RunLevel>LeastPrivilege</RunLevel>');
    expect(xml).toContain('<ExecutionTimeLimit>PT0S</ExecutionTimeLimit>');
    expect(xml).toContain('<Command>C:\\Program Files\\nodejs\\node.exe</Command><Arguments>&quot;C:\\Users\\A &amp; B\\capnode\\bin.js&quot; serve</Arguments>');
    expect(() => windowsLogonTask({ command: ['node.exe'] })).toThrow(/absolute path/);
    expect(() => windowsLogonTask({ command: ['C:\\node.exe', 'C:\\100%USERNAME%\\bin.js'] })).toThrow(/Task Scheduler would expand/);
  });
});

describe('service file locations', () => {
  it('systemd user dir (XDG_CONFIG_HOME first), LaunchAgents, the config directory on Windows', () => {
    expect(servicePath('linux', { userHome: '/home/u', capnodeHome: '/home/u/.config/capnode' })).toBe('/home/u/.config/systemd/user/capnode.service');
    expect(servicePath('linux', { userHome: '/home/u', xdgConfigHome: '/x/cfg', capnodeHome: '/c' })).toBe('/x/cfg/systemd/user/capnode.service');
    expect(servicePath('darwin', { userHome: '/Users/u', capnodeHome: '/c' })).toBe('/Users/u/Library/LaunchAgents/dev.capnode.host.plist');
    expect(servicePath('win32', { userHome: 'C:\\Users\\u', capnodeHome: 'C:\\Users\\u\\AppData\\Roaming\\capnode' })).toBe('C:\\Users\\u\\AppData\\Roaming\\capnode\\logon-task.xml');
    const windows = serviceFile('win32', { command: ['C:\\node.exe', 'x'], env: { CAPNODE_HOME: 'ignored' } }, { userHome: 'C:\\Users\\u', capnodeHome: 'C:\\c' });
    expect(windows.encoding).toBe('utf16le');
    expect(windows.text).not.toContain('ignored');
    expect(serviceFile('linux', { command: ['/usr/bin/node'] }, { userHome: '/h', capnodeHome: '/c' }).encoding).toBe('utf8');
  });
});
