import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createHost } from '@capnode/host';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTrayIcons } from '../../apps/tray/src/icons.js';
import { startTestDisplay, type TestDisplay } from '../support/display.js';
import { eventually } from '../support/poll.js';
import { startTestHost, tempDir } from '../support/testHost.js';
import { clickMenuItem, findTrayMenu, menuItems, trayIconFile } from './dbusMenu.js';

const trayBin = resolve(fileURLToPath(new URL('../../apps/tray/dist/bin.js', import.meta.url)));
const slow = { timeoutMs: 20_000 };

/** Runs the built `capnode-tray` with `args`, collecting its stderr. */
function startTrayProcess(args: readonly string[], env: NodeJS.ProcessEnv): { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [trayBin, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, stderr: () => stderr, exited };
}

function readClipboard(env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((done, fail) => execFile('xclip', ['-selection', 'clipboard', '-out'], { env, timeout: 5_000 }, (error, stdout) => (error ? fail(error) : done(stdout))));
}

const labels = async (display: TestDisplay, name: string) => (await menuItems(display.busAddress, name)).map((item) => item.label);

describe.runIf(process.platform === 'linux')('capnode-tray smoke run under Xvfb (built bin, real helper, real host)', () => {
  let display: TestDisplay;
  const icons = loadTrayIcons();

  beforeAll(async () => {
    if (!existsSync(trayBin)) throw new Error(`${trayBin} is missing; build first: pnpm turbo run build --filter @capnode/tray...`);
    display = await startTestDisplay();
  });
  afterAll(async () => {
    await display?.close();
  });

  it('runs the host in process: status line with the real URL, approvals count and icon, Copy token, Quit → the process exits by itself', { timeout: 90_000 }, async () => {
    using home = tempDir('capnode-tray-home-');
    writeFileSync(join(home.path, 'settings.json'), JSON.stringify({ mcp: { port: 0 }, approvals: { wait: 'block' } }), { mode: 0o600 });
    const tray = startTrayProcess(['--in-process'], { ...display.env, CAPNODE_HOME: home.path, XDG_CACHE_HOME: join(home.path, 'cache') });
    try {
      const name = await findTrayMenu(display.busAddress, slow);
      const runtime = await eventually(() => (existsSync(join(home.path, 'host.json')) ? (JSON.parse(readFileSync(join(home.path, 'host.json'), 'utf8')) as { url: string }) : undefined), { what: 'host.json', ...slow });
      await eventually(async () => (await labels(display, name)).includes(`capnode: MCP on ${runtime.url}`), { what: 'the status line', ...slow });
      expect(tray.stderr()).toContain('running the host in this process');

      // A real MCP client asks for something that needs approval: the tray counts it and turns to attention.
      const token = readFileSync(join(home.path, 'mcp-token'), 'utf8').trim();
      const client = new Client({ name: 'tray-smoke', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(runtime.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      const call = client.callTool({ name: 'system.run', arguments: { command: [process.execPath, '-e', '1'] } });
      await eventually(async () => (await labels(display, name)).includes('Approvals (1)'), { what: 'Approvals (1)', ...slow });
      await eventually(async () => readFileSync(await trayIconFile(display.busAddress, name)).equals(icons.attention), { what: 'the attention icon', ...slow });
      const adminToken = readFileSync(join(home.path, 'admin-token'), 'utf8').trim();
      const pending = (await (await fetch(new URL('/_capnode/approvals', runtime.url), { headers: { authorization: `Bearer ${adminToken}` } })).json()) as { approvals: { id: string }[] };
      await fetch(new URL('/_capnode/approvals', runtime.url), { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ id: pending.approvals[0]!.id, decision: 'deny' }) });
      await call;
      await client.close();
      await eventually(async () => (await labels(display, name)).includes('Approvals (0)'), { what: 'Approvals (0)', ...slow });
      await eventually(async () => readFileSync(await trayIconFile(display.busAddress, name)).equals(icons.ok), { what: 'the ok icon', ...slow });

      await clickMenuItem(display.busAddress, name, 'Copy token');
      await eventually(async () => (await readClipboard(display.env).catch(() => '')) === token, { what: 'the token on the clipboard', ...slow });
      await clickMenuItem(display.busAddress, name, 'Copy MCP URL');
      await eventually(async () => (await readClipboard(display.env).catch(() => '')) === runtime.url, { what: 'the URL on the clipboard', ...slow });

      // Pause and resume through the menu: the real listener stops and starts again.
      await clickMenuItem(display.busAddress, name, 'Pause MCP server');
      await eventually(async () => (await labels(display, name)).includes('capnode: MCP server paused'), { what: 'paused', ...slow });
      await expect(fetch(runtime.url)).rejects.toThrow();
      await clickMenuItem(display.busAddress, name, 'Resume MCP server');
      await eventually(async () => (await labels(display, name)).some((label) => label.startsWith('capnode: MCP on http://127.0.0.1:')), { what: 'resumed', ...slow });

      await clickMenuItem(display.busAddress, name, 'Quit');
      expect(await tray.exited).toBe(0);
      expect(existsSync(join(home.path, 'host.json'))).toBe(false);
    } finally {
      tray.child.kill('SIGKILL');
    }
  });

  it('attaches to a running host: shows its URL; Quit ends the tray and leaves the host running', { timeout: 60_000 }, async () => {
    await using test = await startTestHost({ clientName: 'tray-attach-smoke' });
    const tray = startTrayProcess([], { ...display.env, CAPNODE_HOME: test.home, XDG_CACHE_HOME: join(test.home, 'cache') });
    try {
      const name = await findTrayMenu(display.busAddress, slow);
      await eventually(async () => (await labels(display, name)).includes(`capnode: MCP on ${test.url}`), { what: 'the attached status line', ...slow });
      expect((await labels(display, name))).toContain('Gateway node mode: off');
      expect(tray.stderr()).toContain(`attached to the host of ${test.home}`);
      await clickMenuItem(display.busAddress, name, 'Quit');
      expect(await tray.exited).toBe(0);
      expect(test.host.status().mcp.state).toBe('listening');
    } finally {
      tray.child.kill('SIGKILL');
    }
  });

  it('--attach before any host runs: error icon and "host not reachable", then the host that starts is picked up', { timeout: 60_000 }, async () => {
    using home = tempDir('capnode-tray-wait-');
    const tray = startTrayProcess(['--attach'], { ...display.env, CAPNODE_HOME: home.path, XDG_CACHE_HOME: join(home.path, 'cache') });
    try {
      const name = await findTrayMenu(display.busAddress, slow);
      await eventually(async () => (await labels(display, name)).includes('capnode: host not reachable'), { what: 'not reachable', ...slow });
      await eventually(async () => readFileSync(await trayIconFile(display.busAddress, name)).equals(icons.error), { what: 'the error icon', ...slow });
      await using host = createHost({ home: home.path, port: 0, onLog: () => {} });
      const url = (await host.start()).mcp.url!;
      await eventually(async () => (await labels(display, name)).includes(`capnode: MCP on ${url}`), { what: 'the host picked up', ...slow });
      await eventually(async () => readFileSync(await trayIconFile(display.busAddress, name)).equals(icons.ok), { what: 'the ok icon', ...slow });
      await clickMenuItem(display.busAddress, name, 'Quit');
      expect(await tray.exited).toBe(0);
    } finally {
      tray.child.kill('SIGKILL');
    }
  });

  it('the MCP port is taken: the tray still starts, shows the error icon and the reason, and quits cleanly', { timeout: 60_000 }, async () => {
    using home = tempDir('capnode-tray-busy-');
    const busy = createServer();
    await new Promise<void>((done) => busy.listen(0, '127.0.0.1', done));
    const port = (busy.address() as AddressInfo).port;
    writeFileSync(join(home.path, 'settings.json'), JSON.stringify({ mcp: { port } }), { mode: 0o600 });
    const tray = startTrayProcess(['--in-process'], { ...display.env, CAPNODE_HOME: home.path, XDG_CACHE_HOME: join(home.path, 'cache') });
    try {
      const name = await findTrayMenu(display.busAddress, slow);
      await eventually(async () => (await labels(display, name)).some((label) => label.startsWith(`capnode: MCP error — port ${port} on 127.0.0.1 is already in use`)), { what: 'the listen error', ...slow });
      await eventually(async () => readFileSync(await trayIconFile(display.busAddress, name)).equals(icons.error), { what: 'the error icon', ...slow });
      expect((await menuItems(display.busAddress, name)).find((item) => item.label === 'Copy MCP URL')?.enabled).toBe(false);
      await clickMenuItem(display.busAddress, name, 'Quit');
      expect(await tray.exited).toBe(0);
    } finally {
      tray.child.kill('SIGKILL');
      busy.close();
    }
  });

  it('without a display the tray says why and what to do, and exits 1', { timeout: 30_000 }, async () => {
    using home = tempDir('capnode-tray-nodisplay-');
    writeFileSync(join(home.path, 'settings.json'), JSON.stringify({ mcp: { port: 0 } }), { mode: 0o600 });
    const env: NodeJS.ProcessEnv = { ...display.env, CAPNODE_HOME: home.path, XDG_CACHE_HOME: join(home.path, 'cache') };
    delete env.DISPLAY;
    const tray = startTrayProcess(['--in-process'], env);
    expect(await tray.exited).toBe(1);
    expect(tray.stderr()).toMatch(/the tray icon cannot be shown: .*DISPLAY is not set.*capnode serve/);
    expect(existsSync(join(home.path, 'host.json'))).toBe(false);
  });
});
