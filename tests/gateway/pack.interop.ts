import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GatewayClient } from '@capnode/gateway-bridge';
import { approveGatewayNodePairing, findGatewayNode } from '@capnode/gateway-bridge/node';
import { findChromiumExecutable } from '@capnode/capabilities/pack';
import { createHost, type Host } from '@capnode/host';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectOperator, invokeNode } from './fixtures.js';
import { gatewayWait, interopSkipReason, startGateway, type RealGateway } from './harness.js';
import { missingDisplayTools } from '../support/display.js';
import { eventually } from '../support/poll.js';
import { tempDir } from '../support/testHost.js';
import { hasXvfb, startXvfb, type Xvfb } from '../support/xvfb.js';
import { decodeToRgb } from '../pack/screenSupport.js';

const hasTool = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0;
const missingTools = missingDisplayTools() ?? (hasXvfb() ? undefined : 'xsetroot (apt install x11-xserver-utils)') ?? (['ffmpeg', 'xclip', 'notify-send'].filter((tool) => !hasTool(tool)).join(', ') || undefined);
const skipReason = interopSkipReason() ?? (missingTools ? `pack backends missing: ${missingTools}` : undefined);
if (skipReason) console.warn(`gateway pack interop skipped: ${skipReason}`);

/** A real notification server (GTK's notification-daemon) so system.notify's notify-send is answered. */
const NOTIFICATION_DAEMON = '/usr/lib/notification-daemon/notification-daemon';
const GEOCLUE_GPS = fileURLToPath(new URL('../pack/fixtures/geoclue-gps.txt', import.meta.url));

/**
 * What this gateway config adds to linux's defaults (system.*, screen.snapshot; camera.list and
 * location.get through the bundled linux-node plugin): the dangerous camera.snap, and the pack's
 * commands OpenClaw has no default for. stt.transcribe and stt.listen are allowed so that their
 * absence from the declaration is the node's doing. screen.record and camera.clip are left out on
 * purpose: the gateway must refuse them although the node declares them and the pairing approves it.
 */
const PACK_ALLOW = ['camera.snap', 'screen.list', 'clipboard.read', 'clipboard.write', 'tts.status', 'stt.status', 'stt.transcribe', 'stt.listen'];

/** The caps the stock host declares here: the dedicated browser's only where Chromium runs. */
const PACK_CAPS = [...(findChromiumExecutable() ? ['browser'] : []), 'camera', ...(findChromiumExecutable() ? ['canvas'] : []), 'computer', 'location', 'screen', 'talk'];

/** The virtual cameras: a test pattern, and a noise source whose JPEG is larger than the gateway accepts. */
const CAMERAS = [
  { id: 'virtual-test', name: 'Virtual test pattern', lavfi: 'testsrc=size=640x480:rate=30', position: 'front' },
  { id: 'virtual-noise', name: 'Virtual noise', lavfi: 'color=c=gray:s=6144x4096,noise=alls=100:allf=t', position: 'back' },
];

/** A private D-Bus session bus (for notify-send and the notification server); its address. */
async function startSessionBus(dir: string): Promise<{ readonly address: string; readonly child: ChildProcess }> {
  const child = spawn('dbus-daemon', ['--session', '--nofork', '--print-address=1', `--address=unix:path=${join(dir, 'bus')}`], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const address = await eventually(() => (out.includes('\n') ? out.split('\n')[0]!.trim() : undefined), { what: 'dbus-daemon', timeoutMs: 10_000 });
  return { address, child };
}

function pngSize(data: Buffer): { width: number; height: number } | undefined {
  if (data.length < 24 || data.toString('latin1', 1, 4) !== 'PNG' || data.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

function nodeErrorCode(result: Awaited<ReturnType<typeof invokeNode>>): string | undefined {
  return result.ok ? undefined : (result.details as { nodeError?: { code?: string } } | undefined)?.nodeError?.code;
}

/** Recorded GeoClue output; the mode file picks what this where-am-i does (as the real demo prints it). */
function writeWhereAmI(dir: string): { readonly program: string; readonly modeFile: string } {
  const program = join(dir, 'where-am-i');
  const modeFile = join(dir, 'location-mode');
  writeFileSync(modeFile, 'gps');
  writeFileSync(
    program,
    [
      '#!/bin/sh',
      `case "$(cat '${modeFile}')" in`,
      `  gps) cat '${GEOCLUE_GPS}'; exec sleep 30 ;;`,
      "  disabled) echo 'Client object: /org/freedesktop/GeoClue2/Client/2'; echo 'Geolocation disabled. Quitting..'; exit 0 ;;",
      "  silent) echo 'Client object: /org/freedesktop/GeoClue2/Client/4'; sleep \"$2\"; exit 0 ;;",
      'esac',
      '',
    ].join('\n'),
  );
  chmodSync(program, 0o755);
  return { program, modeFile };
}

/** The desktop the pack's backends use: Xvfb, a session bus, a notification server; sets DISPLAY and the bus in process.env. */
interface TestDesktop extends AsyncDisposable {
  readonly display: Xvfb;
  /** Whether notification-daemon registered org.freedesktop.Notifications. */
  readonly notificationsReady: boolean;
}

async function startDesktop(dir: string): Promise<TestDesktop> {
  const saved = { DISPLAY: process.env.DISPLAY, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS, WAYLAND_DISPLAY: process.env.WAYLAND_DISPLAY };
  // Xvfb on a display number whose lock file and socket path are free: its abstract socket is this
  // (loopback-only) namespace's own, so `-displayfd` would pick numbers a server outside already
  // uses and take over its /tmp/.X11-unix path, the only socket capnode's X11 client can reach.
  const display = await startXvfb({ width: 800, height: 600 });
  const bus = await startSessionBus(dir).catch(async (error: unknown) => {
    await display.close();
    throw error;
  });
  process.env.DISPLAY = display.display;
  process.env.DBUS_SESSION_BUS_ADDRESS = bus.address;
  delete process.env.WAYLAND_DISPLAY;
  let notifications: ChildProcess | undefined;
  let notificationsReady = false;
  if (existsSync(NOTIFICATION_DAEMON)) {
    notifications = spawn(NOTIFICATION_DAEMON, [], { env: { ...process.env, NO_AT_BRIDGE: '1' }, stdio: 'ignore' });
    notificationsReady = await eventually(
      () => spawnSync('busctl', ['--address', bus.address, 'list', '--no-pager'], { encoding: 'utf8' }).stdout?.includes('org.freedesktop.Notifications'),
      { what: 'the notification daemon on the session bus', timeoutMs: 20_000 },
    ).then(() => true, () => false);
  }
  return {
    display,
    notificationsReady,
    async [Symbol.asyncDispose]() {
      notifications?.kill();
      bus.child.kill();
      await display.close();
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    },
  };
}

/** settings.json of the stock host: gateway node mode on this gateway, consent allowed, the pack pointed at the test sources. */
function writeHostSettings(home: string, gateway: RealGateway, display: string, whereAmI: string, modelDir: string): void {
  mkdirSync(home, { mode: 0o700 });
  writeFileSync(
    join(home, 'settings.json'),
    JSON.stringify({
      approvals: { wait: 'block' },
      gateway: { enabled: true, url: gateway.url, token: gateway.token },
      consent: { screen: 'allow', camera: 'allow', microphone: 'allow', location: 'allow' },
      pluginSettings: {
        screen: { display },
        camera: { virtualDevices: CAMERAS, realDevices: false },
        location: { whereAmI },
        // No model here: stt.transcribe and stt.listen are unavailable, so never declared.
        stt: { modelDir },
      },
    }),
    { mode: 0o600 },
  );
}

describe.skipIf(skipReason !== undefined)('the capability pack on a capnode gateway node (stock host) through the real OpenClaw gateway', () => {
  let gateway: RealGateway;
  let desktop: TestDesktop;
  let display: Xvfb;
  let host: Host;
  let operator: GatewayClient;
  let nodeId: string;
  let locationMode: string;
  const dir = tempDir('capnode-pack-interop-');
  const logs: string[] = [];

  const setConsent = (consent: Partial<Record<'screen' | 'camera' | 'microphone' | 'location', 'off' | 'ask' | 'allow'>>) =>
    host.settings.update((current) => ({ ...current, consent: { ...current.consent, ...consent } }));
  const invoke = (command: string, params: unknown, timeoutMs = 30_000) => invokeNode(operator, nodeId, command, params, { timeoutMs });

  beforeAll(async () => {
    desktop = await startDesktop(dir.path);
    display = desktop.display;
    const whereAmI = writeWhereAmI(dir.path);
    locationMode = whereAmI.modeFile;
    gateway = await startGateway({ allowCommands: PACK_ALLOW });
    const home = join(dir.path, 'home');
    writeHostSettings(home, gateway, display.display, whereAmI.program, join(dir.path, 'no-model'));
    host = createHost({ home, port: 0, logFile: false, onLog: (level, message) => logs.push(`${level} ${message}`) });
    await host.start();
    nodeId = await eventually(() => (host.status().node.state === 'connected' ? host.status().node.nodeId : undefined), gatewayWait('the gateway node to connect', 60_000));
    operator = await connectOperator(gateway.url, gateway.token, home);
  });

  afterAll(async () => {
    if (process.env.PACK_INTEROP_DEBUG) console.info(logs.join('\n'));
    await operator?.close();
    await host?.close();
    await desktop?.[Symbol.asyncDispose]();
    await gateway?.[Symbol.asyncDispose]();
    dir[Symbol.dispose]();
  });

  it('declares the available pack commands with caps per OpenClaw family; an unavailable command is not declared', async () => {
    // What the node declares: the registry without localOnly and unavailable commands (the count is the node's own).
    const unavailable = host.status().plugins.flatMap((plugin) => plugin.unavailable.map((entry) => entry.command));
    expect(unavailable).toEqual(expect.arrayContaining(['stt.transcribe', 'stt.listen']));
    const declarable = host.registry.commands({ excludeLocalOnly: true }).map((command) => command.name).filter((name) => !unavailable.includes(name));
    // Plus the node-hosted MCP tools family (mcp.tools.call.v1), always declared by the host's gateway node.
    expect(host.status().node.declaredCommands).toBe(declarable.length + 1);
    expect(declarable).toEqual(expect.arrayContaining(['screen.record', 'camera.clip']));

    // The gateway keeps the declared commands its allowlist admits: stt.transcribe and stt.listen are
    // allowed like stt.status, so their absence is the node's not declaring them.
    const entry = await eventually(async () => {
      const found = await findGatewayNode(operator, nodeId);
      return found?.pendingDeclaredCommands?.length ? found : undefined;
    }, gatewayWait('the node with its declared commands'));
    const declared = entry.pendingDeclaredCommands ?? [];
    expect(declared).toEqual(expect.arrayContaining([...PACK_ALLOW.filter((command) => command !== 'stt.transcribe' && command !== 'stt.listen'), 'screen.snapshot', 'system.notify', 'camera.list', 'location.get']));
    expect(declared).not.toContain('stt.transcribe');
    expect(declared).not.toContain('stt.listen');
    // Declared, but the gateway withholds dangerous commands without an allow entry.
    expect(declared).not.toContain('screen.record');
    expect(declared).not.toContain('camera.clip');

    // caps: OpenClaw's families only (clipboard, system, device are none); computer.act is in linux's defaults.
    const listed = (await operator.request('node.list', {})) as { nodes: { nodeId: string; caps?: string[]; pendingDeclaredCaps?: string[] }[] };
    const listedEntry = listed.nodes.find((node) => node.nodeId === nodeId);
    expect([...(listedEntry?.pendingDeclaredCaps ?? [])].sort()).toEqual(PACK_CAPS);

    const approved = await approveGatewayNodePairing(operator, nodeId);
    expect(approved.length).toBeGreaterThanOrEqual(1);
    await eventually(() => host.status().node.pairing?.state === 'approved', gatewayWait('the node to see the approval'));
    const after = await findGatewayNode(operator, nodeId);
    expect(after?.commands).toEqual(expect.arrayContaining(declared));
    expect([...((after as { caps?: string[] } | undefined)?.caps ?? [])].sort()).toEqual(PACK_CAPS);
  });

  it('screen.snapshot: canonical { format, base64 } whose PNG has the Xvfb size and colour', async () => {
    display.paint('#ff8000');
    // OpenClaw's computer-use contract adds executionId to the canonical params.
    const result = await invoke('screen.snapshot', { format: 'png', executionId: 'exec-interop-1' });
    expect(result, JSON.stringify(result).slice(0, 500)).toMatchObject({ ok: true, payload: { ok: true, nodeId, command: 'screen.snapshot', payload: { format: 'png', width: 800, height: 600, screenIndex: 0 } } });
    const png = Buffer.from((result as { payload: { payload: { base64: string } } }).payload.payload.base64, 'base64');
    expect(pngSize(png)).toEqual({ width: 800, height: 600 });
    const rgb = decodeToRgb(png, 800, 600);
    expect([...rgb.subarray((300 * 800 + 10) * 3, (300 * 800 + 10) * 3 + 3)]).toEqual([0xff, 0x80, 0x00]);
    const screens = await invoke('screen.list', {});
    expect(screens).toMatchObject({ ok: true, payload: { payload: { screens: [expect.objectContaining({ width: 800, height: 600 })] } } });
  });

  it('camera.list and camera.snap (dangerous, allowed in gateway.nodes.commands.allow) from the virtual source', async () => {
    const list = await invoke('camera.list', {});
    expect(list).toMatchObject({ ok: true, payload: { payload: { devices: [
      { id: 'virtual-test', name: 'Virtual test pattern', position: 'front', deviceType: 'virtual' },
      { id: 'virtual-noise', name: 'Virtual noise', position: 'back', deviceType: 'virtual' },
    ] } } });
    const snap = await invoke('camera.snap', { deviceId: 'virtual-test', maxWidth: 320, quality: 0.8 });
    expect(snap).toMatchObject({ ok: true, payload: { payload: { format: 'jpg', width: 320, height: 240 } } });
    const jpeg = Buffer.from((snap as { payload: { payload: { base64: string } } }).payload.payload.base64, 'base64');
    expect(jpeg.subarray(0, 2).toString('hex')).toBe('ffd8');
    // Exactly the params OpenClaw's agent tool sends to a linux node (no facing there); its parser needs format, base64, width, height.
    const agent = await invoke('camera.snap', { maxWidth: 1600, quality: 0.95, format: 'jpg', deviceId: 'virtual-test' });
    expect(agent).toMatchObject({ ok: true, payload: { payload: { format: 'jpg', base64: expect.stringMatching(/^\/9j\//), width: 640, height: 480 } } });
  });

  it('the gateway refuses dangerous commands missing from gateway.nodes.commands.allow (screen.record, camera.clip), though declared and paired', async () => {
    const started = host.status().node.invocations?.started;
    for (const command of ['screen.record', 'camera.clip']) {
      const result = await invoke(command, { durationMs: 500 }, 10_000);
      expect(result, command).toMatchObject({
        ok: false,
        code: 'INVALID_REQUEST',
        message: expect.stringContaining(`node command not allowed: "${command}" requires explicit gateway.nodes.commands.allow opt-in`),
        details: { reason: 'command not allowlisted', command },
      });
    }
    // Refused by the gateway: no invoke reached the node.
    expect(host.status().node.invocations?.started).toBe(started);
  });

  it('location.get: lat/lon from the recorded GeoClue fix; LOCATION_DISABLED and TIMEOUT pass through as OpenClaw codes', async () => {
    writeFileSync(locationMode, 'gps');
    const fix = await invoke('location.get', { timeoutMs: 10_000, desiredAccuracy: 'precise' });
    expect(fix).toMatchObject({ ok: true, payload: { payload: { lat: 52.520008, lon: 13.404954, accuracyMeters: 25, timestamp: '2026-12-01T11:00:00.000Z', isPrecise: true, source: 'gps' } } });

    writeFileSync(locationMode, 'disabled');
    const disabled = await invoke('location.get', { timeoutMs: 5_000 });
    expect(nodeErrorCode(disabled)).toBe('LOCATION_DISABLED');
    expect(disabled).toMatchObject({ ok: false, details: { code: 'LOCATION_DISABLED' } });

    writeFileSync(locationMode, 'silent');
    const timeout = await invoke('location.get', { timeoutMs: 1_000 });
    expect(nodeErrorCode(timeout)).toBe('TIMEOUT');
    expect(timeout).toMatchObject({ ok: false, details: { code: 'TIMEOUT' } });
  });

  it.runIf(existsSync(NOTIFICATION_DAEMON))('system.notify answers { ok: true } (a real notification server on the session bus)', async () => {
    expect(desktop.notificationsReady, 'notification-daemon registered org.freedesktop.Notifications').toBe(true);
    const result = await invoke('system.notify', { title: 'capnode interop', body: 'from the gateway', priority: 'active' });
    expect(result).toMatchObject({ ok: true, payload: { payload: { ok: true } } });
  });

  it('clipboard.write then clipboard.read round trip (xclip on the Xvfb display)', async () => {
    const text = 'gateway → clipboard ✓\n--not-a-flag';
    const written = await invoke('clipboard.write', { text });
    expect(written).toMatchObject({ ok: true, payload: { payload: { ok: true, format: 'text', bytes: Buffer.byteLength(text) } } });
    const read = await invoke('clipboard.read', {});
    expect(read).toMatchObject({ ok: true, payload: { payload: { format: 'text', text, empty: false } } });
  });

  it('tts.status lists its providers and readiness; stt.status says what to install', async () => {
    const result = await invoke('tts.status', {});
    expect(result).toMatchObject({
      ok: true,
      payload: { payload: { ready: expect.any(Boolean), providers: expect.arrayContaining([expect.objectContaining({ name: 'espeak-ng', available: expect.any(Boolean), ready: expect.any(Boolean) })]) } },
    });
    const stt = await invoke('stt.status', {});
    expect(stt).toMatchObject({ ok: true, payload: { payload: { ready: false, engines: [{ name: 'pocketsphinx', ready: false, install: expect.any(String) }] } } });
  });

  it('consent off: the gateway caller gets PERMISSION_REQUIRED; on again, the command runs', async () => {
    await setConsent({ screen: 'off', camera: 'off', location: 'off' });
    try {
      for (const [command, params] of [['screen.snapshot', {}], ['camera.snap', { deviceId: 'virtual-test' }], ['location.get', { timeoutMs: 5_000 }]] as const) {
        const result = await invoke(command, params);
        expect(result.ok, command).toBe(false);
        expect(nodeErrorCode(result), command).toBe('PERMISSION_REQUIRED');
        // The gateway's own answer names the code too (core route: UNAVAILABLE "PERMISSION_REQUIRED: …";
        // the bundled linux-node plugin's route for camera.* and location.get: details.code).
        expect(result.ok === false && result.message, command).toContain('PERMISSION_REQUIRED');
      }
    } finally {
      await setConsent({ screen: 'allow', camera: 'allow', location: 'allow' });
    }
    expect(await invoke('screen.snapshot', { maxWidth: 100 })).toMatchObject({ ok: true, payload: { payload: { format: 'png', width: 100 } } });
  });

  it('consent ask: the gateway call waits for the user through the approval broker, with the command and its parameters', async () => {
    await setConsent({ camera: 'ask' });
    try {
      const pending = invoke('camera.snap', { deviceId: 'virtual-test', maxWidth: 160 }, 60_000);
      const approval = await eventually(() => host.approvals.list()[0], gatewayWait('the consent approval request'));
      expect(approval).toMatchObject({ command: 'camera.snap', transport: 'gateway' });
      expect(JSON.stringify(approval)).toContain('virtual-test');
      host.approvals.resolve(approval.id, 'allow-once');
      expect(await pending).toMatchObject({ ok: true, payload: { payload: { format: 'jpg', width: 160 } } });

      const denied = invoke('camera.snap', { deviceId: 'virtual-test', maxWidth: 160 }, 60_000);
      const second = await eventually(() => host.approvals.list()[0], gatewayWait('the second consent approval request'));
      host.approvals.resolve(second.id, 'deny');
      expect(nodeErrorCode(await denied)).toBe('DENIED');
    } finally {
      await setConsent({ camera: 'allow' });
    }
  });

  it('a result over the 25 MiB payload limit is PAYLOAD_TOO_LARGE with the connection still up; one under it goes through', async () => {
    const connectedAt = host.status().node.connectedAt;
    const tooLarge = await invoke('camera.snap', { deviceId: 'virtual-noise', maxWidth: 8192, quality: 1 }, 60_000);
    expect(tooLarge).toMatchObject({ ok: false, details: { nodeError: { code: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining('26,148,864') } } });
    expect(host.status().node).toMatchObject({ state: 'connected', connectedAt });
    // About 13 MiB of JPEG noise, over 16 MiB as base64: under the limit, so it travels whole.
    const large = await invoke('camera.snap', { deviceId: 'virtual-noise', maxWidth: 4800, quality: 1 }, 60_000);
    expect(large, `${JSON.stringify(large).slice(0, 400)}\n${logs.slice(-5).join('\n')}\n${gateway.output().slice(-1500)}`).toMatchObject({ ok: true, payload: { payload: { format: 'jpg', width: 4800 } } });
    expect((large as { payload: { payload: { base64: string } } }).payload.payload.base64.length).toBeGreaterThan(16 * 1024 * 1024);
    expect(host.status().node).toMatchObject({ state: 'connected', connectedAt });
  });
});
