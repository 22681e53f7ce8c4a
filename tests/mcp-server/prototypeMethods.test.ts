// Method and tool names that are Object.prototype members are client input like any other: they get
// JSON-RPC "method not found" (-32601) or an unknown-tool result, as valid JSON, on every transport.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { postJson, spawnRawStdio, useSuiteFixtureServer } from './helpers.js';

const PROTOTYPE_NAMES = [
  'constructor',
  '__proto__',
  'toString',
  'toLocaleString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  'propertyIsEnumerable',
  '__defineGetter__',
  '__lookupGetter__',
] as const;

const REVISION = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': REVISION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'prototype-test', version: '1' },
};

function expectMethodNotFound(text: string, id: number | string): void {
  const message = JSON.parse(text) as { jsonrpc: string; id: unknown; error?: { code: number; message: string }; result?: unknown };
  expect(message).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32601, message: expect.any(String) } });
  expect(message).not.toHaveProperty('result');
}

describe('Object.prototype names over HTTP', () => {
  const ctx = useSuiteFixtureServer();

  it.each(PROTOTYPE_NAMES)('initialize era: method %s answers -32601', async (method) => {
    const response = await postJson(ctx.url, { jsonrpc: '2.0', id: 1, method });
    expect(response.headers['content-type']).toContain('application/json');
    expectMethodNotFound(response.body, 1);
    const withParams = await postJson(ctx.url, { jsonrpc: '2.0', id: 'p', method, params: {} });
    expectMethodNotFound(withParams.body, 'p');
  });

  it.each(PROTOTYPE_NAMES)('2026-07-28: method %s answers -32601', async (method) => {
    const response = await postJson(ctx.url, { jsonrpc: '2.0', id: 2, method, params: { _meta: envelope } }, { 'mcp-protocol-version': REVISION, 'mcp-method': method });
    expectMethodNotFound(response.body, 2);
  });

  it('a batch of prototype names answers each with -32601; notifications with such names get 202', async () => {
    const batch = await postJson(ctx.url, PROTOTYPE_NAMES.map((method, index) => ({ jsonrpc: '2.0', id: index, method })));
    const answers = JSON.parse(batch.body) as Array<{ id: number; error: { code: number } }>;
    expect(answers.map((answer) => [answer.id, answer.error.code])).toEqual(PROTOTYPE_NAMES.map((_, index) => [index, -32601]));
    for (const method of PROTOTYPE_NAMES) {
      const notification = await postJson(ctx.url, { jsonrpc: '2.0', method });
      expect(notification.status).toBe(202);
      expect(notification.body).toBe('');
    }
  });

  it.each(PROTOTYPE_NAMES)('tools/call of a tool named %s is an unknown tool, with its failure code', async (name) => {
    const response = await postJson(ctx.url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: {} } });
    expect(JSON.parse(response.body)).toMatchObject({ id: 3, result: { isError: true, _meta: { 'capnode/failure': { code: 'unknown_command' } } } });
  });
});

describe('Object.prototype names over stdio', () => {
  beforeAll(() => {
    if (!existsSync(fileURLToPath(new URL('../../packages/mcp-server/dist/stdio.js', import.meta.url)))) {
      throw new Error('The stdio fixture imports built packages: run `pnpm --filter @capnode/mcp-server... build` first.');
    }
  });

  it('initialize era: every prototype name answers -32601 and unknown tools say so', async () => {
    await using stdio = spawnRawStdio();
    const init = await stdio.request({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    expect(init.result.protocolVersion).toBe('2025-06-18');
    stdio.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    for (const [index, method] of PROTOTYPE_NAMES.entries()) {
      const answer = await stdio.request({ jsonrpc: '2.0', id: index + 1, method });
      expect(answer, method).toMatchObject({ error: { code: -32601 } });
      stdio.write(JSON.stringify({ jsonrpc: '2.0', method }));
      const tool = await stdio.request({ jsonrpc: '2.0', id: `tool-${method}`, method: 'tools/call', params: { name: method, arguments: {} } });
      expect(tool.result, method).toMatchObject({ isError: true, _meta: { 'capnode/failure': { code: 'unknown_command' } } });
    }
    const ping = await stdio.request({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    expect(ping.result).toEqual({});
    for (const line of stdio.lines) expect(() => JSON.parse(line), line).not.toThrow();
  });

  it('2026-07-28: every prototype name answers -32601', async () => {
    await using stdio = spawnRawStdio();
    for (const [index, method] of PROTOTYPE_NAMES.entries()) {
      const answer = await stdio.request({ jsonrpc: '2.0', id: index + 1, method, params: { _meta: envelope } });
      expect(answer, method).toMatchObject({ error: { code: -32601 } });
    }
    for (const line of stdio.lines) expect(() => JSON.parse(line), line).not.toThrow();
  });
});
