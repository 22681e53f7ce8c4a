import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { describe, expect, test } from 'vitest';
import { activeHandles, expectNoHandlesLeft, fixtureServer, grantAll, memoryLogger, readLog, runScenario } from './helpers.js';
import { tempDir } from '../support/testHost.js';
import { eventually, isAlive } from '../support/poll.js';

const pidOf = (log: string) => eventually(() => readLog(log).find((line) => line.startsWith('started '))?.split(' ')[1]).then(Number);

describe('close() owns everything it started', () => {
  test('a stdio server ignoring EOF and SIGTERM is killed (process group, SIGKILL) within the grace; nothing is left', async () => {
    using dir = tempDir();
    const log = join(dir.path, 'log');
    const baseline = activeHandles();
    const runtime = await createMcpRuntime(grantAll([fixtureServer('stubborn', 'ignore-term', { env: { FIXTURE_LOG: log } })]), { agent: 'test', logger: memoryLogger() });
    const pid = await pidOf(log);
    expect(runtime.diagnostics()[0]!.state).toBe('connected');
    const started = performance.now();
    await runtime.close();
    // EOF, 1 s, SIGTERM, 1 s, SIGKILL: well under 10 s even on a loaded machine.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(isAlive(pid)).toBe(false);
    expect(readLog(log)).toContain('sigterm ignored');
    await expectNoHandlesLeft(baseline);
  });

  test('close() during start-up leaves no server running, whether the server is still starting or already connected', async () => {
    using dir = tempDir();
    const slowLog = join(dir.path, 'slow');
    const baseline = activeHandles();
    const config = grantAll([
      fixtureServer('slow', 'ok', { env: { FIXTURE_LOG: slowLog, FIXTURE_INIT_DELAY_MS: '60000' } }),
      fixtureServer('silent', 'never-answer', { connect_timeout_secs: 60 }),
      fixtureServer('hung', 'hang-list', { connect_timeout_secs: 60 }),
    ]);
    const runtime = await createMcpRuntime(config, { agent: 'test', waitForServers: false, logger: memoryLogger() });
    const pid = await pidOf(slowLog);
    await runtime.close();
    expect(isAlive(pid)).toBe(false);
    expect(runtime.diagnostics().map((d) => d.state)).toEqual(['closed', 'closed', 'closed']);
    await expectNoHandlesLeft(baseline);
  });

  test('an abandoned connect attempt (connect timeout) is cleaned up by the connector, and close waits for it', async () => {
    using dir = tempDir();
    const log = join(dir.path, 'log');
    const baseline = activeHandles();
    const runtime = await createMcpRuntime(grantAll([fixtureServer('silent', 'never-answer', { connect_timeout_secs: 1, env: { FIXTURE_LOG: log } })]), { agent: 'test', logger: memoryLogger() });
    expect(runtime.diagnostics()[0]).toMatchObject({ state: 'failed', error: 'did not finish connecting within 1 s' });
    const pid = await pidOf(log);
    await runtime.close();
    expect(isAlive(pid)).toBe(false);
    await expectNoHandlesLeft(baseline);
  });

  test('an SSE server that never sends its endpoint event fails at the connect timeout; its GET is aborted', async () => {
    const open = new Set<ServerResponse>();
    const server = createServer((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': no endpoint event will come\n\n');
        open.add(res);
        res.on('close', () => open.delete(res));
        return;
      }
      res.writeHead(405).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sse`;
      const baseline = activeHandles();
      const runtime = await createMcpRuntime(grantAll([{ name: 'legacy', url, transport: 'sse', connect_timeout_secs: 1 }]), { agent: 'test', logger: memoryLogger() });
      expect(runtime.diagnostics()[0]).toMatchObject({ state: 'failed', error: 'did not finish connecting within 1 s' });
      await eventually(() => open.size === 0, { what: 'the abandoned SSE GET to be aborted' });
      await runtime.close();
      await expectNoHandlesLeft(baseline);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('after close() the process exits by itself (fresh node process)', () => {
  const serverScenario = (mode: string, extra = '') => `
    const { parseMcpConfig } = await import(process.env.MCP_CLIENT);
    const { createMcpRuntime } = await import(process.env.MCP_CLIENT_NODE);
    const { config } = parseMcpConfig({
      servers: [{ name: 'fx', command: process.execPath, args: [process.env.FIXTURE, '${mode}'], connect_timeout_secs: 2 }${extra}],
      bundles: { all: { servers: ['fx'${extra ? ", 'other'" : ''}] } },
      agents: { test: { mcp_bundles: ['all'] } },
      risk_profiles: { test: { autonomy: 'full' } },
    });
    const runtime = await createMcpRuntime(config, { agent: 'test', logger: { debug() {}, info() {}, warn() {}, error() {} } });
    const tools = await runtime.tools();
    await runtime.close();
    console.log(JSON.stringify({ states: runtime.diagnostics().map((d) => d.state), tools: Object.keys(tools).length }));
  `;

  test.each([
    ['a server ignoring EOF and SIGTERM', 'ignore-term', ''],
    ['initialize answered, tools/list never', 'hang-list', ''],
    ['a server that never answers, beside a healthy one', 'never-answer', `, { name: 'other', command: process.execPath, args: [process.env.FIXTURE, 'ok'] }`],
  ])('%s', async (_name, mode, extra) => {
    const result = await runScenario(serverScenario(mode, extra), { timeoutMs: 20_000 });
    expect(result.stderr).toBe('');
    expect(result.exitedByItself).toBe(true);
    expect(result.code).toBe(0);
    expect((result.report as { states: string[] }).states.every((state) => state === 'closed')).toBe(true);
  });

  test('a GC during the SSE handshake (--expose-gc): the connect deadline still fires, and the process exits', async () => {
    const result = await runScenario(
      `
      import { createServer } from 'node:http';
      const server = createServer((req, res) => {
        if (req.method === 'GET') { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.write(': waiting\\n\\n'); return; }
        res.writeHead(405).end();
      });
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { parseMcpConfig } = await import(process.env.MCP_CLIENT);
      const { createMcpRuntime } = await import(process.env.MCP_CLIENT_NODE);
      const { config } = parseMcpConfig({
        servers: [{ name: 'legacy', url: 'http://127.0.0.1:' + server.address().port + '/sse', transport: 'sse', connect_timeout_secs: 1 }],
        bundles: { all: { servers: ['legacy'] } }, agents: { test: { mcp_bundles: ['all'] } },
      });
      const collecting = setInterval(() => { for (let i = 0; i < 3; i += 1) globalThis.gc(); }, 20);
      const runtime = await createMcpRuntime(config, { agent: 'test', logger: { debug() {}, info() {}, warn() {}, error() {} } });
      clearInterval(collecting);
      const [diagnostic] = runtime.diagnostics();
      await runtime.close();
      server.closeAllConnections();
      server.close();
      console.log(JSON.stringify(diagnostic));
      `,
      { execArgv: ['--expose-gc'], timeoutMs: 20_000 },
    );
    expect(result.stderr).toBe('');
    expect(result.exitedByItself).toBe(true);
    expect(result.report).toMatchObject({ state: 'failed', error: 'did not finish connecting within 1 s' });
  });
});
