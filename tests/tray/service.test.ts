import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/testHost.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const cli = join(root, 'apps/cli/dist/bin.js');
const trayBin = join(root, 'apps/tray/dist/bin.js');
const hasSystemdAnalyze = spawnSync('sh', ['-c', 'command -v systemd-analyze']).status === 0;
/** True when `systemctl --user` reaches a real user manager: then the real-systemctl case must not touch it. */
const userManagerRuns = /^(running|degraded|starting|initializing|maintenance|stopping)/.test(spawnSync('systemctl', ['--user', 'is-system-running'], { encoding: 'utf8' }).stdout ?? '');

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built CLI with a temporary HOME (and whatever else `env` says). */
function capnode(args: readonly string[], env: Record<string, string | undefined>): Promise<Run> {
  return new Promise((done) => {
    const base: NodeJS.ProcessEnv = { ...process.env };
    delete base.CAPNODE_HOME;
    delete base.XDG_CONFIG_HOME;
    const child = spawn(process.execPath, [cli, ...args], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('exit', (code) => done({ code, stdout, stderr }));
  });
}

/** A directory with a recording `systemctl` (what it was asked, one line per call) and the `node` the CLI runs. */
function recordingSystemctl(dir: string, exitCode = 0): { bin: string; calls: () => string[] } {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const log = join(dir, 'systemctl.log');
  writeFileSync(join(bin, 'systemctl'), `#!/bin/sh\necho "$*" >> '${log}'\nexit ${exitCode}\n`);
  chmodSync(join(bin, 'systemctl'), 0o755);
  return { bin, calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) };
}

const unitPath = (home: string) => join(home, '.config/systemd/user/capnode.service');

describe.runIf(process.platform === 'linux')('capnode service on Linux (systemd user unit), against a temporary HOME', () => {
  it('--dry-run prints the unit and writes nothing; the unit passes systemd-analyze verify', async () => {
    using home = tempDir('capnode service home "q" 100% $x ');
    const run = await capnode(['service', 'install', '--dry-run'], { HOME: home.path, CAPNODE_HOME: join(home.path, 'cap home') });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`ExecStart="${process.execPath}" "${cli}" "serve"`);
    expect(run.stdout).toContain('Environment="CAPNODE_HOME=');
    expect(run.stdout).toContain('WantedBy=default.target');
    expect(run.stderr).toContain(`would write ${unitPath(home.path)}, then run: systemctl --user daemon-reload && systemctl --user enable --now capnode.service`);
    expect(existsSync(unitPath(home.path))).toBe(false);
    if (hasSystemdAnalyze) {
      const file = join(home.path, 'capnode.service');
      writeFileSync(file, run.stdout);
      const verify = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
      expect({ status: verify.status, stderr: verify.stderr }).toEqual({ status: 0, stderr: '' });
    }
  });

  it('systemctl absent: writes the unit (what --dry-run printed) and says what to run; status and uninstall work', async () => {
    using home = tempDir();
    const env = { HOME: home.path, PATH: '/nonexistent' };
    const dry = await capnode(['service', 'install', '--dry-run'], env);
    const run = await capnode(['service', 'install'], env);
    expect(run.code).toBe(0);
    expect(readFileSync(unitPath(home.path), 'utf8').trimEnd()).toBe(dry.stdout.trimEnd());
    expect(run.stderr).toContain(`wrote ${unitPath(home.path)}`);
    expect(run.stderr).toContain('systemctl not found, so nothing was registered; to start capnode at login, run where systemctl exists: systemctl --user daemon-reload && systemctl --user enable --now capnode.service');

    const status = await capnode(['service', 'status', '--json'], env);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ platform: 'linux', path: unitPath(home.path), installed: true, manager: null });

    const removed = await capnode(['service', 'uninstall'], env);
    expect(removed.code).toBe(0);
    expect(removed.stderr).toContain(`removed ${unitPath(home.path)}`);
    expect(existsSync(unitPath(home.path))).toBe(false);
    const after = await capnode(['service', 'status'], env);
    expect(after.code).toBe(1);
    expect(after.stdout).toContain('not installed');
  });

  it('systemctl present: daemon-reload then enable --now; uninstall disables before removing; XDG_CONFIG_HOME is honoured', async () => {
    using home = tempDir();
    const systemctl = recordingSystemctl(home.path);
    const config = join(home.path, 'xdg config');
    const env = { HOME: home.path, XDG_CONFIG_HOME: config, PATH: `${systemctl.bin}:/usr/bin:/bin` };
    const run = await capnode(['service', 'install'], env);
    expect(run.code).toBe(0);
    expect(existsSync(join(config, 'systemd/user/capnode.service'))).toBe(true);
    expect(run.stderr).toContain('registered — the host starts at login (and runs now)');
    expect(systemctl.calls()).toEqual(['--user daemon-reload', '--user enable --now capnode.service']);
    const removed = await capnode(['service', 'uninstall'], env);
    expect(removed.code).toBe(0);
    expect(systemctl.calls().slice(2)).toEqual(['--user disable --now capnode.service', '--user daemon-reload']);
    expect(existsSync(join(config, 'systemd/user/capnode.service'))).toBe(false);
  });

  it('systemctl present but failing: the file stays, the message says the command to run, exit 1', async () => {
    using home = tempDir();
    const systemctl = recordingSystemctl(home.path, 1);
    const run = await capnode(['service', 'install'], { HOME: home.path, PATH: `${systemctl.bin}:/usr/bin:/bin` });
    expect(run.code).toBe(1);
    expect(existsSync(unitPath(home.path))).toBe(true);
    expect(run.stderr).toContain('systemctl could not register it');
    expect(run.stderr).toContain('run this in your desktop session: systemctl --user daemon-reload && systemctl --user enable --now capnode.service');
  });

  it.runIf(existsSync('/usr/bin/systemctl') && !userManagerRuns)('the real systemctl without a user manager (this container): file in place, the reason and the command, exit 1', async () => {
    using home = tempDir();
    const run = await capnode(['service', 'install'], { HOME: home.path, PATH: '/usr/bin:/bin', XDG_RUNTIME_DIR: join(home.path, 'run') });
    expect(run.code).toBe(1);
    expect(existsSync(unitPath(home.path))).toBe(true);
    expect(run.stderr).toMatch(/systemctl could not register it \(.+\); the file is in place — run this in your desktop session: systemctl --user daemon-reload && systemctl --user enable --now capnode.service/);
  });

  it('--tray runs capnode-tray from PATH (its .js with this Node) in the graphical session; without it on PATH, says how to install it', async () => {
    using home = tempDir();
    const bin = join(home.path, 'bin');
    mkdirSync(bin);
    const missing = await capnode(['service', 'install', '--tray', '--dry-run'], { HOME: home.path, PATH: `${bin}:/usr/bin:/bin` });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('capnode-tray is not on PATH — install the tray first (npm install -g @capnode/tray)');
    // As npm links a global bin: PATH entry → the package's executable .js file.
    const script = join(home.path, 'lib', 'node_modules', '@capnode', 'tray', 'dist', 'bin.js');
    mkdirSync(dirname(script), { recursive: true });
    copyFileSync(trayBin, script);
    chmodSync(script, 0o755);
    symlinkSync(script, join(bin, 'capnode-tray'));
    const run = await capnode(['service', 'install', '--tray', '--dry-run'], { HOME: home.path, PATH: `${bin}:/usr/bin:/bin` });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`ExecStart="${process.execPath}" "${script}"`);
    expect(run.stdout).toContain('WantedBy=graphical-session.target');
    expect(run.stdout).toContain('Description=capnode tray');
  });

  it('a CAPNODE_HOME the unit cannot carry (a newline that would add a directive) is a usage error naming it; nothing is written', async () => {
    using home = tempDir();
    for (const args of [['service', 'install', '--dry-run'], ['service', 'install']]) {
      const run = await capnode(args, { HOME: home.path, CAPNODE_HOME: join(home.path, 'cap\nExecStartPre=/bin/true'), PATH: '/nonexistent' });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^capnode: cannot write the login service: environment variable CAPNODE_HOME contains a control character/);
      expect(run.stderr).not.toContain('unexpected error');
      expect(run.stdout).toBe('');
      expect(existsSync(unitPath(home.path))).toBe(false);
    }
  });

  it('refuses unknown actions and flags that do not apply', async () => {
    using home = tempDir();
    const env = { HOME: home.path, PATH: '/nonexistent' };
    const unknown = await capnode(['service', 'start'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("usage: capnode service install [--tray] [--dry-run] | uninstall | status (unknown action 'start')");
    expect((await capnode(['service', 'status', '--tray'], env)).code).toBe(2);
    expect((await capnode(['service', 'status', '--dry-run'], env)).code).toBe(2);
    expect((await capnode(['service', 'install', '--port', '1'], env)).code).toBe(2);
    expect(existsSync(unitPath(home.path))).toBe(false);
  });
});
