import { appendFileSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineCapability, defineCommand, z, type Capability } from '@capnode/capabilities';
import { createHost, type Host, type HostOptions } from '@capnode/host';
import { delay } from '@capnode/toolkit';
import { startOpenAgentBridge, type OpenAgentBridge, type OpenAgentBridgeOptions } from './openAgentBridge.js';

/** `bytes` deterministic pseudo-random bytes (an incompressible test payload). */
export function pseudoRandom(bytes: number, seed = 1): Buffer {
  const out = Buffer.alloc(bytes);
  let state = seed >>> 0 || 1;
  for (let index = 0; index < bytes; index += 1) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[index] = state & 0xff;
  }
  return out;
}

/** Test commands: `oa.echo` (read-only), `oa.wait` (read-only, runs until aborted or `ms`), `oa.append` (mutating: appends a line to `file`), `oa.screen` (needs `screen` consent). */
export function openAgentTestCapability(): Capability {
  const wait = (ms: number, signal: AbortSignal) => delay(ms, { signal });
  return defineCapability({
    category: 'oa',
    commands: [
      defineCommand({ name: 'oa.echo', description: 'Echoes its text.', annotations: { readOnly: true }, input: z.object({ text: z.string() }), execute: (args) => args.text }),
      defineCommand({
        name: 'oa.wait',
        description: 'Waits.',
        annotations: { readOnly: true },
        input: z.object({ ms: z.number().default(60_000) }),
        execute: async (args, context) => (await wait(args.ms, context.signal), 'waited'),
      }),
      defineCommand({
        name: 'oa.append',
        description: 'Appends a line to a file.',
        input: z.object({ file: z.string(), line: z.string(), ms: z.number().default(0) }),
        execute: async (args, context) => {
          if (args.ms > 0) await wait(args.ms, context.signal);
          appendFileSync(args.file, `${args.line}\n`);
          return 'appended';
        },
      }),
      defineCommand({
        name: 'oa.blob',
        description: 'An image of `bytes` pseudo-random bytes.',
        annotations: { readOnly: true },
        input: z.object({ bytes: z.number(), seed: z.number().default(1) }),
        execute: (args) => ({ ok: true, content: [{ type: 'text', text: 'here' }, { type: 'image', data: pseudoRandom(args.bytes, args.seed).toString('base64'), mimeType: 'image/png' }] }),
      }),
      defineCommand({
        name: 'oa.touch',
        description: 'Peeks (reads) or pokes (changes); waits `ms` first.',
        classificationByArgument: { mode: { peek: 'read_only' } },
        input: z.object({ mode: z.enum(['peek', 'poke']), ms: z.number().default(0) }),
        execute: async (args, context) => (args.ms > 0 && (await wait(args.ms, context.signal)), args.mode),
      }),
      defineCommand({ name: 'oa.screen', description: 'Needs screen consent.', annotations: { readOnly: true }, consent: 'screen', execute: () => 'seen' }),
    ],
  });
}

export interface OpenAgentTestHost extends AsyncDisposable {
  readonly host: Host;
  readonly home: string;
  readonly bridge: OpenAgentBridge;
  readonly logs: string[];
}

export interface OpenAgentTestHostOptions {
  /** Merged into the `openagent` settings section (enabled, the bridge's URL and ids, heartbeat 1 s by default). */
  readonly openagent?: Record<string, unknown>;
  /** Other settings sections. */
  readonly settings?: Record<string, unknown>;
  readonly bridge?: OpenAgentBridgeOptions;
  readonly host?: Partial<HostOptions>;
  /** An existing config directory (a restart). */
  readonly home?: string;
}

/** A bridge and a real host (no plugins, the test capability) whose OpenAgent channel points at it. */
export async function startOpenAgentHost(options: OpenAgentTestHostOptions = {}): Promise<OpenAgentTestHost> {
  const bridge = await startOpenAgentBridge(options.bridge);
  const home = options.home ?? realpathSync(mkdtempSync(join(tmpdir(), 'capnode-openagent-')));
  const openagent = { enabled: true, url: bridge.url, deviceId: options.bridge?.deviceId ?? 'device-1', accountId: options.bridge?.accountId ?? 'account-1', heartbeatMs: 1000, ...options.openagent };
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ approvals: { wait: 'block', notify: false }, dashboard: { enabled: false }, ...options.settings, openagent }), { mode: 0o600 });
  const logs: string[] = [];
  const host = createHost({ home, port: 0, plugins: false, builtinPlugins: false, capabilities: [openAgentTestCapability()], onLog: (level, message) => logs.push(`${level}: ${message}`), ...options.host });
  const dispose = async () => {
    await host.close();
    await bridge.close();
    if (options.home === undefined) rmSync(home, { recursive: true, force: true, maxRetries: 5 });
  };
  try {
    await host.start();
  } catch (error) {
    await dispose();
    throw error;
  }
  return { host, home, bridge, logs, [Symbol.asyncDispose]: dispose };
}
