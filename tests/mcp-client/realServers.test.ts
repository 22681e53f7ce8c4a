import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { afterAll, describe, expect, test } from 'vitest';
import { grantAll, memoryLogger, realServer, textOf } from './helpers.js';
import { tempDir } from '../support/testHost.js';
import { freePort } from '../support/net.js';

const everything = realServer('server-everything');

/** Starts server-everything in an HTTP mode on a free loopback port; resolves once it listens. */
async function startEverything(mode: 'streamableHttp' | 'sse'): Promise<{ port: number; child: ChildProcess }> {
  for (let attempt = 0; ; attempt += 1) {
    const port = await freePort();
    const child = spawn(process.execPath, [everything, mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    const ready = await new Promise<boolean>((resolve) => {
      let text = '';
      const timer = setTimeout(() => resolve(false), 20_000);
      child.stderr!.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (/listening on port|is running on port/.test(text)) {
          clearTimeout(timer);
          resolve(true);
        }
        if (/already in use/.test(text)) {
          clearTimeout(timer);
          resolve(false);
        }
      });
      child.once('exit', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (ready) return { port, child };
    child.kill('SIGKILL');
    if (attempt >= 2) throw new Error(`server-everything ${mode} did not start`);
  }
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

describe('@modelcontextprotocol/server-everything', () => {
  test('over stdio: lists tools, calls them, and materializes its image', async () => {
    using workspace = tempDir();
    const logger = memoryLogger();
    const config = grantAll([{ name: 'everything', command: process.execPath, args: [everything, 'stdio'] }]);
    await using runtime = await createMcpRuntime(config, { agent: 'test', workspace: workspace.path, logger });
    const tools = await runtime.tools();
    expect(Object.keys(tools)).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-sum', 'everything__get-tiny-image']));
    expect(tools['everything__get-sum']!.inputSchema).toMatchObject({ type: 'object', properties: { a: expect.anything(), b: expect.anything() } });
    expect(textOf(await tools['everything__echo']!.execute({ message: 'hello' }))).toBe('Echo: hello');
    expect(textOf(await tools['everything__get-sum']!.execute({ a: 2, b: 3 }))).toMatch(/5/);

    const image = await tools['everything__get-tiny-image']!.execute({});
    expect(image.attachments).toHaveLength(1);
    expect(image.attachments[0]!.path.startsWith(join(workspace.path, 'uploads'))).toBe(true);
    expect(readFileSync(image.attachments[0]!.path).subarray(1, 4).toString()).toBe('PNG');
    expect(JSON.stringify(image)).not.toMatch(/iVBORw0KGgo/);

    const diagnostic = runtime.diagnostics()[0]!;
    expect(diagnostic).toMatchObject({ state: 'connected', transport: 'stdio', serverInfo: { name: expect.any(String) } });
    expect(logger.text()).toContain('[everything stderr]');
  });

  test('over Streamable HTTP', async () => {
    const { port, child } = await startEverything('streamableHttp');
    children.push(child);
    const config = grantAll([{ name: 'everything', url: `http://127.0.0.1:${port}/mcp`, headers: { 'X-Test': 'yes' } }]);
    await using runtime = await createMcpRuntime(config, { agent: 'test' });
    expect(runtime.diagnostics()[0]).toMatchObject({ state: 'connected', transport: 'http' });
    expect(textOf(await runtime.call('everything__echo', { message: 'over http' }))).toBe('Echo: over http');
    expect(textOf(await runtime.call('everything__get-sum', { a: 20, b: 22 }))).toMatch(/42/);
  });

  test('a legacy SSE server: http falls back to SSE; transport = sse connects directly', async () => {
    const { port, child } = await startEverything('sse');
    children.push(child);
    const config = grantAll([
      { name: 'fallback', url: `http://127.0.0.1:${port}/sse` },
      { name: 'direct', transport: 'sse', url: `http://127.0.0.1:${port}/sse` },
    ]);
    await using runtime = await createMcpRuntime(config, { agent: 'test' });
    expect(runtime.diagnostics().map((d) => [d.server, d.state, d.transport])).toEqual([
      ['fallback', 'connected', 'sse'],
      ['direct', 'connected', 'sse'],
    ]);
    expect(textOf(await runtime.call('fallback__echo', { message: 'legacy' }))).toBe('Echo: legacy');
    expect(textOf(await runtime.call('direct__echo', { message: 'direct' }))).toBe('Echo: direct');
  });
});

test('@modelcontextprotocol/server-filesystem: list and read inside the allowed directory only', async () => {
  using dir = tempDir();
  const root = realpathSync(dir.path);
  writeFileSync(join(root, 'hello.txt'), 'hello from disk');
  const config = grantAll([{ name: 'filesystem', command: process.execPath, args: [realServer('server-filesystem'), root] }], {
    autonomy: 'supervised',
    auto_approve: ['filesystem__read_text_file', 'filesystem__list_directory'],
  });
  await using runtime = await createMcpRuntime(config, { agent: 'test' });
  const tools = await runtime.tools();
  expect(Object.keys(tools)).toEqual(expect.arrayContaining(['filesystem__read_text_file', 'filesystem__write_file', 'filesystem__list_directory']));
  expect(textOf(await runtime.call('filesystem__list_directory', { path: root }))).toContain('hello.txt');
  expect(textOf(await runtime.call('filesystem__read_text_file', { path: join(root, 'hello.txt') }))).toBe('hello from disk');
  const outside = await runtime.call('filesystem__read_text_file', { path: '/etc/hostname' });
  expect(outside.isError).toBe(true);
  const unapproved = await runtime.call('filesystem__write_file', { path: join(root, 'x.txt'), content: 'x' });
  expect(unapproved.isError).toBe(true);
  expect(textOf(unapproved)).toMatch(/needs approval/);
});

test('@modelcontextprotocol/server-memory: entities round-trip through the knowledge graph', async () => {
  using dir = tempDir();
  const config = grantAll([{ name: 'memory', command: process.execPath, args: [realServer('server-memory')], env: { MEMORY_FILE_PATH: join(dir.path, 'memory.jsonl') } }]);
  await using runtime = await createMcpRuntime(config, { agent: 'test' });
  const created = await runtime.call('memory__create_entities', { entities: [{ name: 'capnode', entityType: 'project', observations: ['imports MCP tools'] }] });
  expect(created.isError).toBe(false);
  const graph = await runtime.call('memory__read_graph', {});
  expect(textOf(graph)).toContain('imports MCP tools');
  expect(graph.structuredContent).toMatchObject({ entities: [expect.objectContaining({ name: 'capnode' })] });
});
