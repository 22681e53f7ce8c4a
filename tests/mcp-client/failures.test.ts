import { join } from 'node:path';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { describe, expect, test } from 'vitest';
import { fixtureServer, grantAll, memoryLogger, readLog, textOf } from './helpers.js';
import { tempDir } from '../support/testHost.js';
import { eventually, isAlive } from '../support/poll.js';

describe('isolation at startup', () => {
  test('a server that exits, hangs or cannot spawn becomes a diagnostic; the others work', async () => {
    const logger = memoryLogger();
    const config = grantAll([
      fixtureServer('good'),
      fixtureServer('exits', 'exit-at-start'),
      fixtureServer('silent', 'never-answer', { connect_timeout_secs: 2 }),
      { name: 'missing', command: '/nonexistent/capnode-test-binary' },
    ]);
    const started = performance.now();
    await using runtime = await createMcpRuntime(config, { agent: 'test', logger });
    expect(performance.now() - started).toBeLessThan(15_000);

    const tools = await runtime.tools();
    expect(Object.keys(tools).every((name) => name.startsWith('good__'))).toBe(true);
    expect(textOf(await tools['good__echo']!.execute({ text: 'still here' }))).toBe('still here');

    const byName = Object.fromEntries(runtime.diagnostics().map((d) => [d.server, d]));
    expect(byName.good).toMatchObject({ state: 'connected', toolCount: 15, transport: 'stdio' });
    expect(byName.exits).toMatchObject({ state: 'failed', toolCount: 0 });
    expect(byName.exits!.error).toMatch(/code 3/);
    expect(byName.exits!.error).toContain('cannot open database');
    expect(byName.exits!.error).not.toContain('abcdef123456');
    expect(byName.silent).toMatchObject({ state: 'failed' });
    expect(byName.silent!.error).toMatch(/within 2 s/);
    expect(byName.missing).toMatchObject({ state: 'failed' });
    expect(byName.missing!.error).toMatch(/ENOENT/);
  });
});

describe('calls', () => {
  test('a crash mid-call fails that call with the reason, and the next call reconnects', async () => {
    const logger = memoryLogger();
    await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx')]), { agent: 'test', logger });
    const crashed = await runtime.call('fx__crash');
    expect(crashed.isError).toBe(true);
    expect(textOf(crashed)).toMatch(/connection closed/);
    expect(textOf(crashed)).toContain('crashing now');
    expect(runtime.diagnostics()[0]!.state).toBe('disconnected');
    expect(logger.text()).toContain('[fx stderr] crashing now');

    const early = await runtime.call('fx__echo', { text: 'x' });
    expect(textOf(early)).toMatch(/not connected.*next connection attempt after/);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const again = await runtime.call('fx__echo', { text: 'back' });
    expect(textOf(again)).toBe('back');
    expect(runtime.diagnostics()[0]!.state).toBe('connected');
  });

  test('per-call timeout and caller aborts send notifications/cancelled; aborts do not count as failures', async () => {
    using dir = tempDir();
    const log = join(dir.path, 'log');
    const config = grantAll([fixtureServer('fx', 'ok', { tool_timeout_secs: 1, env: { FIXTURE_LOG: log } })]);
    await using runtime = await createMcpRuntime(config, { agent: 'test' });

    const timedOut = await runtime.call('fx__hang');
    expect(timedOut.isError).toBe(true);
    expect(textOf(timedOut)).toMatch(/did not answer 'hang' within 1 s/);
    const hangId = readLog(log).find((line) => line.startsWith('hang '))!.split(' ')[1];
    await eventually(() => readLog(log).includes(`cancelled ${hangId}`));

    for (let i = 0; i < 3; i += 1) {
      const controller = new AbortController();
      const pending = runtime.call('fx__slow', { ms: 30_000 }, { signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      const aborted = await pending;
      expect(aborted.isError).toBe(true);
      expect(textOf(aborted)).toMatch(/cancelled/);
    }
    await eventually(() => readLog(log).filter((line) => line.startsWith('cancelled ')).length >= 4);
    expect(textOf(await runtime.call('fx__echo', { text: 'not paused' }))).toBe('not paused');
  });

  test("aborting a call made through the host's pipeline (not runtime.call) also sends notifications/cancelled", async () => {
    using dir = tempDir();
    const log = join(dir.path, 'log');
    await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'ok', { env: { FIXTURE_LOG: log } })]), { agent: 'test' });
    const controller = new AbortController();
    const pending = runtime.invoker.invoke({ command: 'fx__hang', transport: 'mcp-http' }, { signal: controller.signal });
    const hangId = await eventually(() => readLog(log).find((line) => line.startsWith('hang '))?.split(' ')[1]);
    controller.abort();
    expect((await pending).result).toMatchObject({ ok: false, error: { code: 'cancelled' } });
    await eventually(() => readLog(log).includes(`cancelled ${hangId}`));
  });

  test('three consecutive failures pause the server for 60 s with the retry time; a success resets the count', async () => {
    await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'ok', { env: { SECRET_TOKEN: 'sekret-token-value' } })]), { agent: 'test' });
    const first = await runtime.call('fx__fail');
    expect(textOf(first)).toContain('backend refused');
    expect(textOf(first)).not.toContain('sekret-token-value');
    await runtime.call('fx__fail');
    expect(textOf(await runtime.call('fx__echo', { text: 'ok' }))).toBe('ok');
    await runtime.call('fx__fail');
    await runtime.call('fx__fail');
    expect(runtime.diagnostics()[0]!.state).toBe('connected');
    await runtime.call('fx__fail');

    const before = Date.now();
    const paused = await runtime.call('fx__echo', { text: 'blocked' });
    expect(paused.isError).toBe(true);
    const match = /paused after repeated tool failures; retry after (\S+) \(in (\d+) s\)/.exec(textOf(paused));
    expect(match).not.toBeNull();
    const retryAt = Date.parse(match![1]!);
    expect(retryAt - before).toBeGreaterThan(55_000);
    expect(retryAt - before).toBeLessThanOrEqual(61_000);
    expect(runtime.diagnostics()[0]).toMatchObject({ state: 'paused', pausedUntil: match![1] });
  });

  test('a session whose third failure in a row is a timeout is recycled (its process ends); the call is not replayed', async () => {
    using dir = tempDir();
    const log = join(dir.path, 'log');
    await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'ok', { tool_timeout_secs: 1, env: { FIXTURE_LOG: log } })]), { agent: 'test', logger: memoryLogger() });
    const pid = Number(readLog(log).find((l) => l.startsWith('started '))!.split(' ')[1]);
    for (let i = 0; i < 3; i += 1) expect(textOf(await runtime.call('fx__hang'))).toMatch(/within 1 s/);
    expect(runtime.diagnostics()[0]).toMatchObject({ state: 'paused', error: 'session recycled: timed out repeatedly' });
    await eventually(() => !isAlive(pid));
    expect(readLog(log).filter((l) => l.startsWith('hang '))).toHaveLength(3);
  });

  test('tool error results are scrubbed and capped at 500 characters', async () => {
    await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'ok', { env: { SECRET_TOKEN: 'sekret-token-value' } })]), { agent: 'test' });
    const result = await runtime.call('fx__iserror');
    expect(result.isError).toBe(true);
    expect(textOf(result).length).toBeLessThanOrEqual(500);
    expect(textOf(result)).toContain('[redacted]');
    expect(textOf(result)).not.toContain('sekret-token-value');
  });
});

describe('stdio framing', () => {
  test('a non-JSON banner and garbage lines on stdout are skipped, not fatal', async () => {
    const logger = memoryLogger();
    await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'banner')]), { agent: 'test', logger });
    expect(runtime.diagnostics()[0]!.state).toBe('connected');
    expect(textOf(await runtime.call('fx__garbage'))).toBe('after garbage');
    expect(textOf(await runtime.call('fx__echo', { text: 'fine' }))).toBe('fine');
    expect(logger.text()).toContain('non-JSON line');
  });

  test('a secret straddling the cut of a logged stdout or stderr line is scrubbed before the cut', async () => {
    const secret = 'straddling-secret-value-0123456789';
    const logger = memoryLogger();
    await using runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'straddle', { env: { SECRET_TOKEN: secret } })]), { agent: 'test', logger });
    expect(runtime.diagnostics()[0]!.state).toBe('connected');
    await eventually(() => logger.text().includes('[fx stderr]') && logger.text().includes('non-JSON line'));
    const text = logger.text();
    for (let length = 6; length <= secret.length; length += 1) expect(text).not.toContain(secret.slice(0, length));
  });

  test('a line longer than max_response_bytes is discarded, its call fails at once, the session survives', async () => {
    const config = grantAll([fixtureServer('fx', 'ok', { max_response_bytes: 100_000, tool_timeout_secs: 60 })]);
    await using runtime = await createMcpRuntime(config, { agent: 'test' });
    const started = performance.now();
    const result = await runtime.call('fx__huge', { bytes: 500_000 });
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/exceeded max_response_bytes \(100000 bytes\)/);
    expect(textOf(await runtime.call('fx__huge', { bytes: 50_000 }))).toHaveLength(50_000);
    expect(runtime.diagnostics()[0]!.state).toBe('connected');
  });
});

describe('close', () => {
  test('ends the whole process group, fails in-flight and later calls at once, leaves no handles', async () => {
    using dir = tempDir();
    const log = join(dir.path, 'log');
    const baseline = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length;
    const runtime = await createMcpRuntime(grantAll([fixtureServer('fx', 'spawn-child', { env: { FIXTURE_LOG: log } })]), { agent: 'test' });
    const lines = await eventually(() => {
      const all = readLog(log);
      return all.some((l) => l.startsWith('grandchild ')) && all.some((l) => l.startsWith('started ')) ? all : undefined;
    });
    const serverPid = Number(lines.find((l) => l.startsWith('started '))!.split(' ')[1]);
    const grandchildPid = Number(lines.find((l) => l.startsWith('grandchild '))!.split(' ')[1]);
    expect(isAlive(serverPid) && isAlive(grandchildPid)).toBe(true);

    const tools = await runtime.tools();
    const inflight = tools['fx__slow']!.execute({ ms: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closing = runtime.close();
    const result = await inflight;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/closed/);
    await closing;
    await runtime[Symbol.asyncDispose]();

    expect(isAlive(serverPid)).toBe(false);
    await eventually(() => !isAlive(grandchildPid), { timeoutMs: 5_000 });
    const after = await tools['fx__echo']!.execute({ text: 'x' });
    expect(after).toMatchObject({ isError: true });
    expect(textOf(after)).toMatch(/closed/);
    expect(await runtime.tools()).toEqual({});
    expect(runtime.diagnostics()[0]!.state).toBe('closed');
    await eventually(() => process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length <= baseline, { timeoutMs: 5_000 });
  });

  test('aborting the startup signal closes everything and rejects', async () => {
    const controller = new AbortController();
    const pending = createMcpRuntime(grantAll([fixtureServer('slow', 'never-answer', { connect_timeout_secs: 30 })]), { agent: 'test', signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    await expect(pending).rejects.toMatchObject({ code: 'aborted' });
  });
});
