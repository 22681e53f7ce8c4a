import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveHome } from '../../config/paths.js';
import { cliLaunch } from './cliLaunch.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'capnode-launch-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const userHome = join(root, 'user');
const defaultHome = resolveHome({ env: {}, userHome, platform: 'linux' });

describe('cliLaunch', () => {
  it('prefers the capnode on PATH, as an absolute path; passes CAPNODE_HOME only for a non-default config directory', () => {
    const bin = join(root, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'capnode'), '#!/bin/sh\n');
    chmodSync(join(bin, 'capnode'), 0o755);
    const env = { PATH: `${join(root, 'missing')}:${bin}` };
    expect(cliLaunch({ env, home: defaultHome, userHome, platform: 'linux' })).toEqual({ command: join(bin, 'capnode'), args: ['mcp'] });
    expect(cliLaunch({ env, home: join(root, 'other'), userHome, platform: 'linux' })).toEqual({ command: join(bin, 'capnode'), args: ['mcp'], env: { CAPNODE_HOME: join(root, 'other') } });
    expect(cliLaunch({ env: { ...env, CAPNODE_HOME: defaultHome }, home: defaultHome, userHome, platform: 'linux' }).env).toEqual({ CAPNODE_HOME: defaultHome });
  });

  it('never uses a file on PATH that is not executable', () => {
    const bin = join(root, 'plain');
    mkdirSync(bin);
    writeFileSync(join(bin, 'capnode'), 'not a program');
    expect(cliLaunch({ env: { PATH: bin }, home: defaultHome, userHome, platform: 'linux' }).command).not.toBe(join(bin, 'capnode'));
  });

  it('without capnode on PATH: the CLI script of this process only when it is the capnode bin, else the CLI found beside the host', () => {
    const cli = join(root, 'cli');
    mkdirSync(join(cli, 'dist'), { recursive: true });
    writeFileSync(join(cli, 'package.json'), JSON.stringify({ name: 'capnode', bin: { capnode: './dist/bin.js' } }));
    writeFileSync(join(cli, 'dist', 'bin.js'), '');
    expect(cliLaunch({ env: { PATH: '' }, home: defaultHome, userHome, platform: 'linux', script: join(cli, 'dist', 'bin.js') })).toEqual({ command: process.execPath, args: [join(cli, 'dist', 'bin.js'), 'mcp'] });

    const tray = join(root, 'tray');
    mkdirSync(join(tray, 'dist'), { recursive: true });
    writeFileSync(join(tray, 'package.json'), JSON.stringify({ name: '@capnode/tray', bin: { 'capnode-tray': './dist/bin.js' } }));
    writeFileSync(join(tray, 'dist', 'bin.js'), '');
    const launch = cliLaunch({ env: { PATH: '' }, home: defaultHome, userHome, platform: 'linux', script: join(tray, 'dist', 'bin.js') });
    expect(launch.args).not.toContain(join(tray, 'dist', 'bin.js'));
    expect(launch.args.at(-1)).toBe('mcp');
    // In this repository the CLI beside the host is apps/cli.
    expect(launch.args[0]).toMatch(/apps[\\/]cli[\\/]dist[\\/]bin\.js$/);
  });

  it('finds capnode.cmd through PATHEXT on Windows', () => {
    const bin = join(root, 'win');
    mkdirSync(bin);
    writeFileSync(join(bin, 'capnode.cmd'), '@echo off\n');
    expect(cliLaunch({ env: { Path: bin, PATHEXT: '.EXE;.CMD' }, home: 'C:\\Users\\u\\AppData\\Roaming\\capnode', userHome: 'C:\\Users\\u', platform: 'win32' }).command).toBe(join(bin, 'capnode.cmd'));
  });
});
