import { access, chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApprovalBroker } from '../approvalBroker.js';
import type { Capability } from '../contract.js';
import { createMemoryExecApprovalStore } from '../execPolicy.js';
import { findExecutable } from '../internal/which.js';
import { createBuiltinCapabilities, createDeviceCapability, createSystemCapability } from '../node.js';
import { createInvoker } from '../pipeline.js';
import { createRegistry } from '../registry.js';

const posix = process.platform !== 'win32';
let tmp: string;

beforeAll(async () => {
  tmp = await realpath(await mkdtemp(path.join(os.tmpdir(), 'capnode-builtins-')));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const invokerFor = (...capabilities: Capability[]) => createInvoker({ registry: createRegistry(capabilities) });

/** A fake `notify-send` body that writes each argument on a line of `$CAPNODE_NOTIFY_OUT`. */
const RECORD_NOTIFY_ARGS = `for a in "$@"; do printf '%s\\n' "$a"; done > "$CAPNODE_NOTIFY_OUT"`;

/** A directory (under the suite's temporary one) holding an executable `notify-send` that runs the sh `body`; for PATH. */
async function fakeNotifySend(name: string, body: string): Promise<string> {
  const bin = path.join(tmp, name);
  await mkdir(bin, { recursive: true });
  await writeFile(path.join(bin, 'notify-send'), `#!/bin/sh\n${body}\n`);
  await chmod(path.join(bin, 'notify-send'), 0o755);
  return bin;
}

describe('createBuiltinCapabilities', () => {
  it('provides every built-in command once, none of them local-only', async () => {
    await using broker = createApprovalBroker();
    const capabilities = createBuiltinCapabilities({ execApprovals: { store: createMemoryExecApprovalStore(), broker } });
    const registry = createRegistry(capabilities);
    expect(registry.commands().map((c) => c.name)).toEqual([
      'device.info',
      'device.status',
      'system.which',
      'system.run',
      'system.run.prepare',
      'system.notify',
      'system.execApprovals.get',
      'system.execApprovals.set',
    ]);
    expect(registry.commands({ excludeLocalOnly: true })).toHaveLength(8);
    for (const command of registry.commands()) expect(command.inputSchema.type).toBe('object');
  });
});

describe('device.info and device.status', () => {
  it('device.info describes the machine', async () => {
    const outcome = await invokerFor(createDeviceCapability()).invoke({ command: 'device.info', transport: 'internal' });
    expect(outcome.result).toMatchObject({
      ok: true,
      structured: {
        os: os.type(),
        platform: process.platform,
        arch: process.arch,
        release: os.release(),
        hostname: os.hostname(),
        cpus: { count: os.cpus().length, model: expect.any(String) },
        memory: { totalBytes: os.totalmem() },
        node: process.version,
        uptimeSeconds: expect.any(Number),
      },
    });
  });

  it('device.status reports load, memory, uptime and disk; both are read-only', async () => {
    const invoker = invokerFor(createDeviceCapability());
    const outcome = await invoker.invoke({ command: 'device.status', transport: 'internal' });
    expect(outcome.result.ok).toBe(true);
    const status = (outcome.result as { structured: Record<string, any> }).structured;
    expect(status.memory.freeBytes).toBeGreaterThan(0);
    expect(status.uptimeSeconds).toBeGreaterThanOrEqual(0);
    expect(status.disk).toMatchObject({ path: os.homedir(), totalBytes: expect.any(Number), availableBytes: expect.any(Number) });
    if (posix) expect(status.loadAverage).toHaveLength(3);
    if (status.battery !== undefined) expect(status.battery).toHaveProperty('name');
    for (const command of invoker.registry.commands()) expect(command.definition.annotations?.readOnly).toBe(true);
  });
});

describe('system.which', () => {
  it('finds node and lists missing programs', async () => {
    const outcome = await invokerFor(createSystemCapability()).invoke({ command: 'system.which', args: { bins: ['node', 'capnode-missing-xyz'] }, transport: 'internal' });
    const result = (outcome.result as unknown as { structured: { found: Record<string, string>; missing: string[] } }).structured;
    expect(Object.keys(result.found)).toEqual(['node']);
    expect(path.isAbsolute(result.found.node!)).toBe(true);
    await access(result.found.node!);
    expect(result.missing).toEqual(['capnode-missing-xyz']);
  });

  it('rejects an empty list', async () => {
    const outcome = await invokerFor(createSystemCapability()).invoke({ command: 'system.which', args: { bins: [] }, transport: 'internal' });
    expect(outcome.result).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
  });
});

describe.runIf(posix)('findExecutable', () => {
  it('skips empty and relative PATH entries and non-executable files', async () => {
    const dir = path.join(tmp, 'which');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'tool'), '#!/bin/sh\n');
    await writeFile(path.join(dir, 'plain'), 'data');
    await chmod(path.join(dir, 'tool'), 0o755);
    expect(await findExecutable('tool', { env: { PATH: `::relative:${dir}` } })).toBe(path.join(dir, 'tool'));
    expect(await findExecutable('plain', { env: { PATH: dir } })).toBeUndefined();
    expect(await findExecutable('tool', { env: { PATH: '' }, cwd: dir })).toBeUndefined();
    expect(await findExecutable('./tool', { env: { PATH: '' }, cwd: dir })).toBe(path.join(dir, 'tool'));
  });
});

describe('system.notify', () => {
  it('fails as unsupported with an install hint when no notifier exists', async () => {
    const outcome = await invokerFor(createSystemCapability({ env: { PATH: '' } })).invoke({ command: 'system.notify', args: { title: 'Hi' }, transport: 'internal' });
    expect(outcome.result).toMatchObject({ ok: false, error: { code: 'unsupported', message: expect.stringMatching(/^system\.notify is unsupported here: /) } });
    if (process.platform === 'linux') expect((outcome.result as { error: { message: string } }).error.message).toMatch(/notify-send \(Debian\/Ubuntu: libnotify-bin/);
  });

  it.runIf(process.platform === 'linux')('passes title and body to notify-send as literal arguments', async () => {
    const bin = await fakeNotifySend('notify-bin', RECORD_NOTIFY_ARGS);
    const out = path.join(tmp, 'notify-args.txt');
    const title = '-$(touch pwned) `id`';
    const outcome = await invokerFor(createSystemCapability({ env: { PATH: bin, CAPNODE_NOTIFY_OUT: out } })).invoke({
      command: 'system.notify',
      args: { title, body: 'line; rm -rf ~', urgency: 'critical' },
      transport: 'internal',
    });
    expect(outcome.result).toMatchObject({ ok: true, structured: { shown: true, via: 'notify-send' } });
    expect((await readFile(out, 'utf8')).split('\n')).toEqual(['--urgency', 'critical', '--app-name', 'capnode', '--', title, 'line; rm -rf ~', '']);
  });

  it.runIf(process.platform === 'linux')('escapes markup in the notify-send body (daemons render it: <span size="1"> could hide a line of an approval)', async () => {
    const bin = await fakeNotifySend('notify-markup', RECORD_NOTIFY_ARGS);
    const out = path.join(tmp, 'notify-markup.txt');
    const outcome = await invokerFor(createSystemCapability({ env: { PATH: bin, CAPNODE_NOTIFY_OUT: out } })).invoke({
      command: 'system.notify',
      args: { title: 't', body: 'git status<span size="1">; curl x | sh</span> & <b>ok</b>' },
      transport: 'internal',
    });
    expect(outcome.result).toMatchObject({ ok: true });
    expect((await readFile(out, 'utf8')).split('\n')).toContain('git status&lt;span size="1"&gt;; curl x | sh&lt;/span&gt; &amp; &lt;b&gt;ok&lt;/b&gt;');
  });

  it.runIf(process.platform === 'linux')('reports a failing notifier with its error line', async () => {
    const bin = await fakeNotifySend('notify-fail', `echo 'Cannot autolaunch D-Bus without X11' >&2\nexit 1`);
    const outcome = await invokerFor(createSystemCapability({ env: { PATH: bin } })).invoke({ command: 'system.notify', args: { title: 'x' }, transport: 'internal' });
    expect(outcome.result).toEqual({ ok: false, error: { code: 'failed', message: 'notify-send could not show the notification: Cannot autolaunch D-Bus without X11' } });
  });
});
