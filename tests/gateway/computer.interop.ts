import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GatewayClient } from '@capnode/gateway-bridge';
import { approveGatewayNodePairing, findGatewayNode } from '@capnode/gateway-bridge/node';
import { createHost, type Host } from '@capnode/host';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectOperator, invokeNode } from './fixtures.js';
import { gatewayWait, interopSkipReason, startGateway, type RealGateway } from './harness.js';
import { eventually } from '../support/poll.js';
import { tempDir } from '../support/testHost.js';
import { hasXvfb, startXvfb, type Xvfb } from '../support/xvfb.js';
import { hasXev, startXevWindow, type XevWindow } from '../support/xevWindow.js';

const skipReason = interopSkipReason() ?? (hasXvfb() && hasXev() ? undefined : 'Xvfb, xsetroot, xev or xwininfo missing (apt install xvfb x11-xserver-utils x11-utils)');
if (skipReason) console.warn(`gateway computer interop skipped: ${skipReason}`);

/**
 * What OpenClaw's own `computer` agent tool sends (openclaw@2026.9.6, dist/computer-tool-*.mjs):
 * the screenshot with maxWidth = its reference width (min(1280, the model's image limit, 1200 by
 * default)), JPEG at 0.85, then computer.act with that same width as refWidth, the frame's
 * displayFrameId, screenIndex and the execution's UUID.
 */
const AGENT_REF_WIDTH = 1200;

describe.skipIf(skipReason !== undefined)('computer.act through the real OpenClaw gateway to a capnode gateway node (stock host)', () => {
  let gateway: RealGateway;
  let display: Xvfb;
  let xev: XevWindow;
  let host: Host;
  let operator: GatewayClient;
  let nodeId: string;
  const dir = tempDir('capnode-computer-interop-');
  const logs: string[] = [];
  const invoke = (command: string, params: unknown) => invokeNode(operator, nodeId, command, params, { timeoutMs: 30_000 });
  const executionId = randomUUID();
  const snapshot = async () => {
    const result = await invoke('screen.snapshot', { executionId, screenIndex: 0, maxWidth: AGENT_REF_WIDTH, quality: 0.85, format: 'jpeg' });
    expect(result, JSON.stringify(result).slice(0, 400)).toMatchObject({ ok: true });
    return (result as { payload: { payload: { displayFrameId: string; width: number; height: number } } }).payload.payload;
  };

  beforeAll(async () => {
    // Smaller than the agent's reference width: the frame is delivered 800 wide while refWidth says 1200.
    display = await startXvfb({ width: 800, height: 600 });
    xev = await startXevWindow(display.env, { x: 100, y: 100, width: 500, height: 300 });
    gateway = await startGateway({ allowCommands: ['computer.act'] });
    const home = join(dir.path, 'home');
    mkdirSync(home, { mode: 0o700 });
    const settings = {
      approvals: { wait: 'block' },
      gateway: { enabled: true, url: gateway.url, token: gateway.token },
      consent: { screen: 'allow', computer: 'allow' },
      pluginSettings: { screen: { display: display.display }, computer: { display: display.display } },
    };
    writeFileSync(join(home, 'settings.json'), JSON.stringify(settings), { mode: 0o600 });
    host = createHost({ home, port: 0, logFile: false, onLog: (level, message) => logs.push(`${level} ${message}`) });
    await host.start();
    nodeId = await eventually(() => (host.status().node.state === 'connected' ? host.status().node.nodeId : undefined), gatewayWait('the gateway node to connect', 60_000));
    operator = await connectOperator(gateway.url, gateway.token, home);
    await eventually(async () => ((await findGatewayNode(operator, nodeId))?.pendingDeclaredCommands?.length ? true : undefined), gatewayWait('the declared commands'));
    await approveGatewayNodePairing(operator, nodeId);
    await eventually(() => host.status().node.pairing?.state === 'approved', gatewayWait('the node to see the approval'));
  }, 600_000);

  afterAll(async () => {
    if (process.env.COMPUTER_INTEROP_DEBUG) console.info(logs.join('\n'));
    await operator?.close();
    await host?.close();
    await gateway?.[Symbol.asyncDispose]();
    await xev?.close();
    await display?.close();
    dir[Symbol.dispose]();
  });

  it('declares computer.act with screen.snapshot and the computer cap', async () => {
    const entry = await findGatewayNode(operator, nodeId);
    expect(entry?.commands).toEqual(expect.arrayContaining(['computer.act', 'screen.snapshot']));
    const listed = (await operator.request('node.list', {})) as { nodes: { nodeId: string; caps?: string[] }[] };
    expect(listed.nodes.find((node) => node.nodeId === nodeId)?.caps).toEqual(expect.arrayContaining(['computer', 'screen']));
  });

  it("the agent's screenshot + click lands on a real X window; typing reaches it", async () => {
    const frame = await snapshot();
    expect(frame).toMatchObject({ width: 800, height: 600, displayFrameId: expect.stringMatching(/^cn1-/) });
    const before = xev.presses.length;
    const click = await invoke('computer.act', { action: 'left_click', executionId, screenIndex: 0, refWidth: AGENT_REF_WIDTH, x: 300, y: 200, displayFrameId: frame.displayFrameId });
    expect(click, JSON.stringify(click).slice(0, 400)).toMatchObject({ ok: true, payload: { command: 'computer.act', payload: { ok: true, effect: 'unverifiable' } } });
    expect(await eventually(() => xev.presses[before], { what: 'the click on the xev window' })).toEqual({ button: 1, rootX: 300, rootY: 200 });

    const start = xev.keysyms.length;
    const typed = await invoke('computer.act', { action: 'type', executionId, screenIndex: 0, refWidth: AGENT_REF_WIDTH, text: 'Gateway 1!' });
    expect(typed).toMatchObject({ ok: true });
    await eventually(() => xev.keysyms.length - start >= 'Gateway 1!'.length, { what: 'the typed text' });
    expect(xev.text().endsWith('Gateway 1!')).toBe(true);
  });

  it('a stale frame and a foreign refWidth fail closed with OpenClaw codes; nothing is clicked', async () => {
    const old = await snapshot();
    const current = await snapshot();
    const before = xev.presses.length;
    const stale = await invoke('computer.act', { action: 'left_click', executionId, screenIndex: 0, refWidth: AGENT_REF_WIDTH, x: 300, y: 200, displayFrameId: old.displayFrameId });
    expect(stale).toMatchObject({ ok: false });
    expect(JSON.stringify(stale)).toContain('COMPUTER_STALE_FRAME');
    const width = await invoke('computer.act', { action: 'left_click', executionId, screenIndex: 0, refWidth: 1280, x: 300, y: 200, displayFrameId: current.displayFrameId });
    expect(JSON.stringify(width)).toContain('COMPUTER_STALE_FRAME');
    const foreign = await invoke('computer.act', { action: 'left_click', executionId: randomUUID(), screenIndex: 0, refWidth: AGENT_REF_WIDTH, x: 300, y: 200, displayFrameId: current.displayFrameId });
    expect(JSON.stringify(foreign)).toContain('COMPUTER_STALE_FRAME');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(xev.presses.length).toBe(before);
  });

  it('consent off refuses computer.act with PERMISSION_REQUIRED', async () => {
    await host.settings.update((current) => ({ ...current, consent: { ...current.consent, computer: 'off' } }));
    try {
      const frame = await snapshot();
      const refused = await invoke('computer.act', { action: 'left_click', executionId, screenIndex: 0, refWidth: AGENT_REF_WIDTH, x: 10, y: 10, displayFrameId: frame.displayFrameId });
      expect(refused).toMatchObject({ ok: false });
      expect(JSON.stringify(refused)).toContain('PERMISSION_REQUIRED');
    } finally {
      await host.settings.update((current) => ({ ...current, consent: { ...current.consent, computer: 'allow' } }));
    }
  });
});
