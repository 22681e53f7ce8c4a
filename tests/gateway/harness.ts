import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { isPlainObject } from '@capnode/toolkit';
import { freePort } from '../support/net.js';
import type { PollOptions } from '../support/poll.js';

/** Where `tests/gateway/run.mjs` installed Node 24 and openclaw (outside the repo, cached). */
export const PEER_ROOT = process.env.OPENCLAW_PEER_ROOT ?? '/tmp/openclaw-peer';
export const GATEWAY_TOKEN = 'capnode-interop-token-0123456789abcdef';
const NODE_BIN = join(PEER_ROOT, 'bin', 'node');
const OPENCLAW = join(PEER_ROOT, 'node_modules', 'openclaw', 'openclaw.mjs');
const PID_FILE = join(PEER_ROOT, 'interop-gateways.pid');

/** Interfaces of this process's network namespace (from /proc/self/net/dev, which follows the namespace). */
function networkInterfaces(): string[] {
  try {
    return readFileSync('/proc/self/net/dev', 'utf8')
      .split('\n')
      .slice(2)
      .map((line) => line.split(':')[0]?.trim() ?? '')
      .filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * Why the interop suite cannot run here, or `undefined` when it can. The gateway is only ever
 * started when this process is inside a network namespace whose only interface is loopback.
 */
export function interopSkipReason(): string | undefined {
  if (process.env.CAPNODE_INTEROP_NETNS !== '1') return 'run it with `pnpm test:interop`, which installs the gateway and enters a loopback-only network namespace';
  const interfaces = networkInterfaces();
  if (interfaces.length !== 1 || interfaces[0] !== 'lo') return `this network namespace is not loopback-only (interfaces: ${interfaces.join(', ') || 'unknown'})`;
  if (!existsSync(NODE_BIN) || !existsSync(OPENCLAW)) return `the gateway is not installed under ${PEER_ROOT}`;
  return undefined;
}

export interface GatewayOptions {
  /** Commands the gateway forwards to linux nodes beyond its platform defaults (`gateway.nodes.commands.allow`). */
  readonly allowCommands?: readonly string[];
  /** More gateway config, deep-merged over the harness's own (plain objects merge; anything else replaces). */
  readonly config?: Readonly<Record<string, unknown>>;
}

function mergeConfig(base: Record<string, unknown>, extra: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const current = merged[key];
    merged[key] = isPlainObject(current) && isPlainObject(value) ? mergeConfig(current, value) : value;
  }
  return merged;
}

/** One real OpenClaw gateway on loopback with isolated state; restartable on the same port and state. */
export interface RealGateway {
  readonly url: string;
  readonly token: string;
  readonly port: number;
  readonly stateDir: string;
  /** Node 24 and the `openclaw.mjs` entry, for running OpenClaw's own CLI (`openclaw mcp serve`). */
  readonly openclaw: { readonly node: string; readonly entry: string };
  /** The isolated environment the gateway runs with; its CLI needs the same. */
  readonly env: Readonly<Record<string, string>>;
  pid(): number | undefined;
  /** Everything the gateway printed. */
  output(): string;
  start(): Promise<void>;
  /**
   * Stops the gateway and its helper processes (its process group) and waits for the exit: SIGTERM
   * (the gateway drains in-flight work first; SIGKILL after 20 s), or SIGKILL at once with `crash`.
   */
  stop(options?: { readonly crash?: boolean }): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

function stripAnsi(text: string): string {
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}

/**
 * Starts the real gateway the way `../shared/peers/openclaw-gateway.sh` does (isolated HOME, state,
 * config and TMPDIR; bonjour, channels, updates, telemetry off), in this process's namespace, which
 * {@link interopSkipReason} has checked to be loopback-only.
 */
export async function startGateway(options: GatewayOptions = {}): Promise<RealGateway> {
  const reason = interopSkipReason();
  if (reason) throw new Error(`refusing to start the gateway: ${reason}`);
  const port = await freePort();
  const base = join(PEER_ROOT, 'interop', `${Date.now()}-${process.pid}-${port}`);
  const stateDir = join(base, 'state');
  const home = join(base, 'home');
  const tmp = join(base, 'tmp');
  const logs = join(base, 'logs');
  for (const dir of [stateDir, home, tmp, logs]) mkdirSync(dir, { recursive: true });
  const configPath = join(stateDir, 'openclaw.json');
  writeFileSync(
    configPath,
    JSON.stringify(
      mergeConfig({
        gateway: {
          mode: 'local',
          port,
          bind: 'loopback',
          auth: { mode: 'token', token: GATEWAY_TOKEN },
          tailscale: { mode: 'off' },
          controlUi: { enabled: false },
          nodes: { pairing: { autoApproveLocal: true, sshVerify: false }, commands: { allow: [...(options.allowCommands ?? [])] } },
        },
        discovery: { mdns: { mode: 'off' } },
        update: { checkOnStart: false, auto: { enabled: false } },
        telemetry: { enabled: false },
        models: { catalogRefresh: { enabled: false } },
        logging: { file: join(logs, 'openclaw-gateway.log') },
      }, options.config ?? {}),
      null,
      2,
    ),
  );
  const env: Record<string, string> = {
    PATH: `${join(PEER_ROOT, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home,
    OPENCLAW_HOME: home,
    OPENCLAW_STATE_DIR: stateDir,
    OPENCLAW_CONFIG_PATH: configPath,
    OPENCLAW_DISABLE_BONJOUR: '1',
    OPENCLAW_SKIP_CHANNELS: '1',
    OPENCLAW_NO_AUTO_UPDATE: '1',
    OPENCLAW_NO_RESPAWN: '1',
    OPENCLAW_OFFLINE: '1',
    OPENCLAW_EXEC_SHELL_SNAPSHOT: '0',
    DO_NOT_TRACK: '1',
    TMPDIR: tmp,
  };
  let child: ChildProcess | undefined;
  let output = '';
  let exited: Promise<void> = Promise.resolve();

  const startOnce = async () => {
    output = '';
    const proc = spawn(NODE_BIN, [OPENCLAW, 'gateway', 'run', '--bind', 'loopback', '--port', String(port), '--auth', 'token', '--token', GATEWAY_TOKEN], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so stopping it also stops the helper processes it spawns.
      detached: true,
    });
    child = proc;
    if (proc.pid) appendFileSync(PID_FILE, `${proc.pid}\n`);
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    proc.stdout!.on('data', (chunk: Buffer) => void (output += chunk.toString('utf8')));
    proc.stderr!.on('data', (chunk: Buffer) => void (output += chunk.toString('utf8')));
    // A loaded machine (several suites at once on two cores) starts it in ~2 min: OPENCLAW_PEER_READY_MS raises the wait.
    const readyMs = Number(process.env.OPENCLAW_PEER_READY_MS) || 90_000;
    const deadline = Date.now() + readyMs;
    while (!/\[gateway\] ready\s*$/m.test(stripAnsi(output))) {
      if (proc.exitCode !== null) throw new Error(`the gateway exited early (${proc.exitCode}):\n${stripAnsi(output).slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`the gateway was not ready within ${readyMs / 1000} s:\n${stripAnsi(output).slice(-2000)}`);
      await delay(200);
    }
  };

  // On a loaded machine the gateway itself sometimes gives up during start-up (e.g. "state lease
  // heartbeat did not become ready") and exits; one more try separates that from a real failure.
  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    try {
      await startOnce();
    } catch (error) {
      if (child?.exitCode === null && child.signalCode === null) throw error;
      console.warn(`gateway start-up failed, trying once more: ${String(error).slice(0, 300)}`);
      await startOnce();
    }
  };

  const signalGroup = (proc: ChildProcess, signal: NodeJS.Signals) => {
    try {
      process.kill(-proc.pid!, signal);
    } catch {
      proc.kill(signal);
    }
  };

  const stop = async (options: { readonly crash?: boolean } = {}) => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    signalGroup(proc, options.crash ? 'SIGKILL' : 'SIGTERM');
    const exitedInTime = await Promise.race([exited.then(() => true), delay(20_000).then(() => false)]);
    if (!exitedInTime) {
      signalGroup(proc, 'SIGKILL');
      await exited;
    }
    // Helpers that outlived their parent.
    signalGroup(proc, 'SIGKILL');
    try {
      const remaining = readFileSync(PID_FILE, 'utf8')
        .split('\n')
        .filter((line) => line && Number(line) !== proc.pid);
      writeFileSync(PID_FILE, remaining.map((line) => `${line}\n`).join(''));
    } catch {
      // No pid file.
    }
  };

  await start();
  return {
    url: `ws://127.0.0.1:${port}`,
    token: GATEWAY_TOKEN,
    port,
    stateDir,
    openclaw: { node: NODE_BIN, entry: OPENCLAW },
    env,
    pid: () => child?.pid,
    output: () => stripAnsi(output),
    start,
    stop,
    async [Symbol.asyncDispose]() {
      await stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** Poll options for waiting on the real gateway: checks often call it, so 100 ms apart, 30 s by default. */
export function gatewayWait(what: string, timeoutMs = 30_000): PollOptions {
  return { what, timeoutMs, intervalMs: 100 };
}
