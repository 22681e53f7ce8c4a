import { execFileSync } from 'node:child_process';
import { closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CapabilityError, createInvoker, createRegistry, defineCapability, defineCommand } from '@capnode/capabilities';
import { argumentsHashSync } from '@capnode/protocol/node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAuditLog } from './audit.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-audit-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const capability = defineCapability({
  category: 'test',
  commands: [
    defineCommand({ name: 'test.echo', description: 'echo', input: z.object({ secret: z.string() }), execute: (args) => args.secret }),
    defineCommand({
      name: 'test.refuse',
      description: 'refuse',
      execute: () => {
        throw new CapabilityError('denied', 'no');
      },
    }),
  ],
});

describe('audit log', () => {
  it('writes one line per invocation with the argument hash but never the values', async () => {
    const path = join(home, 'audit.log');
    const audit = createAuditLog({ path });
    const invoker = createInvoker({ registry: createRegistry([capability]), hooks: [audit.hook] });
    await invoker.invoke({ command: 'TEST.ECHO', args: { secret: 'hunter2' }, transport: 'mcp-http', caller: 'tester', requestId: '7' });
    await invoker.invoke({ command: 'test.refuse', transport: 'mcp-stdio' });
    await invoker.invoke({ command: 'test.missing', args: { secret: 'x' }, transport: 'cli' });
    await audit.close();

    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain('hunter2');
    const lines = text.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      command: 'test.echo',
      transport: 'mcp-http',
      caller: 'tester',
      requestId: '7',
      argsSha256: argumentsHashSync({ secret: 'hunter2' }),
      outcome: 'ok',
    });
    expect(typeof lines[0].durationMs).toBe('number');
    expect(lines[1]).toMatchObject({ command: 'test.refuse', transport: 'mcp-stdio', outcome: 'denied' });
    expect(lines[2]).toMatchObject({ command: 'test.missing', outcome: 'unknown_command' });
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('writes control records beside call records: paths only, scrubbed, at most 32 of at most 200 characters', async () => {
    const path = join(home, 'audit.log');
    const audit = createAuditLog({ path });
    const invoker = createInvoker({ registry: createRegistry([capability]), hooks: [audit.hook] });
    await invoker.invoke({ command: 'test.echo', args: { secret: 'x' }, transport: 'mcp-http' });
    audit.record({ command: 'capnode.settings', transport: 'dashboard', changed: ['execApprovals.allowlist', 'mcpClient.servers'], durationMs: 1.23456 });
    audit.record({ command: 'capnode.settings', transport: 'admin', outcome: 'invalid_settings', changed: [`pluginSettings.ghp_${'a'.repeat(30)}`, `x.${'y'.repeat(500)}`] });
    audit.record({ command: 'capnode.settings', transport: 'dashboard', changed: Array.from({ length: 40 }, (_, index) => `section.key${index}`) });
    audit.record({ command: 'capnode.token.rotate', transport: 'admin' });
    await audit.close();
    audit.record({ command: 'capnode.session.signout', transport: 'dashboard' });

    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain('ghp_aaaa');
    const lines = text.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toHaveLength(5);
    expect(lines[0].changed).toBeUndefined();
    expect(lines[1]).toEqual({ time: expect.any(String), command: 'capnode.settings', transport: 'dashboard', outcome: 'ok', durationMs: 1.235, changed: ['execApprovals.allowlist', 'mcpClient.servers'] });
    expect(lines[2]).toMatchObject({ transport: 'admin', outcome: 'invalid_settings' });
    expect(lines[2].changed[0]).toMatch(/^pluginSettings\./);
    expect(lines[2].changed[1].length).toBeLessThanOrEqual(200);
    expect(lines[3].changed).toHaveLength(32);
    expect(lines[3].changed[30]).toBe('section.key30');
    expect(lines[3].changed[31]).toBe('+9 more');
    expect(lines[4]).toMatchObject({ command: 'capnode.token.rotate', transport: 'admin', outcome: 'ok', durationMs: 0 });
    expect(lines[4].changed).toBeUndefined();
  });

  it('moves a log over the size limit aside when opened', async () => {
    const path = join(home, 'audit.log');
    writeFileSync(path, 'x'.repeat(100));
    const audit = createAuditLog({ path, rotateBytes: 50 });
    await audit.close();
    expect(readFileSync(`${path}.1`, 'utf8')).toHaveLength(100);
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  it('rotates by size while running: at most maxFiles files, the oldest dropped, nothing lost in between', async () => {
    const path = join(home, 'audit.log');
    const audit = createAuditLog({ path, rotateBytes: 2_000, maxFiles: 3 });
    const invoker = createInvoker({ registry: createRegistry([capability]), hooks: [audit.hook] });
    for (let index = 0; index < 20; index += 1) {
      await invoker.invoke({ command: 'test.echo', args: { secret: String(index) }, transport: 'cli', requestId: String(index) });
      await audit.flush();
    }
    await audit.close();
    expect(existsSync(`${path}.3`)).toBe(false);
    const files = [`${path}.2`, `${path}.1`, path];
    for (const file of files) expect(statSync(file).size).toBeLessThanOrEqual(2_000);
    const ids = files.flatMap((file) => readFileSync(file, 'utf8').trim().split('\n').filter(Boolean)).map((line) => Number(JSON.parse(line).requestId));
    // The newest records survive, in order, with no gap; the oldest went with the removed file.
    expect(ids.at(-1)).toBe(19);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, index) => 20 - ids.length + index));
    expect(audit.stats()).toMatchObject({ written: 20, dropped: 0 });
    expect(audit.stats().rotations).toBeGreaterThanOrEqual(2);
  });

  it.runIf(process.platform === 'linux')('never blocks a call on a stalled disk: records beyond the queue are dropped and counted', async () => {
    // A FIFO whose reader never reads: writes stall once the pipe buffer is full, as on a hung disk.
    const path = join(home, 'audit.log');
    execFileSync('mkfifo', ['-m', '600', path]);
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const errors: string[] = [];
    const audit = createAuditLog({ path, maxQueuedBytes: 16 * 1024, closeTimeoutMs: 200, onError: (error) => errors.push(error.message) });
    const invoker = createInvoker({ registry: createRegistry([capability]), hooks: [audit.hook] });
    const started = Date.now();
    for (let index = 0; index < 3_000; index += 1) await invoker.invoke({ command: 'test.echo', args: { secret: 'x' }, transport: 'cli', caller: 'c'.repeat(100) });
    const elapsed = Date.now() - started;
    const stats = audit.stats();
    expect(stats.dropped).toBeGreaterThan(0);
    expect(stats.queuedBytes).toBeLessThanOrEqual(16 * 1024);
    expect(errors.some((message) => message.includes('the disk is slow or stalled'))).toBe(true);
    // Not a timing target: only that 3000 calls did not wait for a disk that takes nothing.
    expect(elapsed).toBeLessThan(20_000);
    await audit.close();
    // Drain the pipe so the write in flight completes and the process can exit by itself.
    const buffer = Buffer.alloc(1 << 16);
    for (;;) {
      try {
        if (readSync(reader, buffer) <= 0) break;
      } catch {
        break;
      }
    }
    closeSync(reader);
  });

  it.runIf(process.platform === 'linux')('a full disk (/dev/full) fails no call; the loss is reported once and counted', async () => {
    const errors: string[] = [];
    const audit = createAuditLog({ path: '/dev/full', onError: (error) => errors.push(error.message) });
    const invoker = createInvoker({ registry: createRegistry([capability]), hooks: [audit.hook] });
    for (let index = 0; index < 5; index += 1) {
      const result = await invoker.invoke({ command: 'test.echo', args: { secret: 'x' }, transport: 'cli' });
      expect(result.result.ok).toBe(true);
      await audit.flush();
    }
    await audit.close();
    expect(audit.stats()).toMatchObject({ written: 0, dropped: 5 });
    expect(errors.length).toBeLessThanOrEqual(2);
    expect(errors.join('\n')).toMatch(/ENOSPC/);
  });

  it.runIf(process.platform !== 'win32')('never writes through a symlinked audit.log', async () => {
    const target = join(home, 'bashrc');
    writeFileSync(target, 'export PATH\n');
    const path = join(home, 'audit.log');
    symlinkSync(target, path);
    const errors: string[] = [];
    const audit = createAuditLog({ path, onError: (error) => errors.push(error.message) });
    const invoker = createInvoker({ registry: createRegistry([capability]), hooks: [audit.hook] });
    await invoker.invoke({ command: 'test.echo', args: { secret: 'x' }, transport: 'cli' });
    await audit.close();
    expect(readFileSync(target, 'utf8')).toBe('export PATH\n');
    expect(errors.join('\n')).toMatch(/ELOOP/);
  });

  it('scrubs, then caps the self-reported caller and unknown command names', async () => {
    const path = join(home, 'audit.log');
    const audit = createAuditLog({ path });
    const invoker = createInvoker({ registry: createRegistry([capability]), hooks: [audit.hook] });
    const secret = 'sk-abcdefghijklmnopqrstuvwxyz0123456789';
    await invoker.invoke({ command: `${'n'.repeat(180)} ${secret}`, transport: 'cli', caller: `${'c'.repeat(190)} ${secret}` });
    await audit.close();
    const line = JSON.parse(readFileSync(path, 'utf8').trim()) as { command: string; caller: string };
    expect(line.caller.length).toBeLessThanOrEqual(200);
    expect(line.command.length).toBeLessThanOrEqual(200);
    expect(line.caller).not.toMatch(/sk-abc/);
    expect(line.command).not.toMatch(/sk-abc/);
  });

  it('two processes sharing audit.log rotate it once, not twice', async () => {
    const path = join(home, 'audit.log');
    const first = createAuditLog({ path, rotateBytes: 1_000, maxFiles: 5 });
    const second = createAuditLog({ path, rotateBytes: 1_000, maxFiles: 5 });
    const invokers = [first, second].map((audit) => createInvoker({ registry: createRegistry([capability]), hooks: [audit.hook] }));
    for (let index = 0; index < 12; index += 1) {
      await invokers[index % 2]!.invoke({ command: 'test.echo', args: { secret: 'x' }, transport: 'cli', requestId: String(index) });
      await first.flush();
      await second.flush();
    }
    await first.close();
    await second.close();
    const files = [`${path}.4`, `${path}.3`, `${path}.2`, `${path}.1`, path].filter((file) => existsSync(file));
    const ids = files.flatMap((file) => readFileSync(file, 'utf8').trim().split('\n').filter(Boolean)).map((line) => Number(JSON.parse(line).requestId));
    expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, index) => index));
  });
});
