import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { STDIO_RELAY_HEADER } from '@capnode/protocol';
import { expect, it } from 'vitest';
import { cliPath, repoRoot } from '../cli/helpers.js';
import { eventually } from '../support/poll.js';
import { startTestHost } from './helpers.js';

const requireFromCli = createRequire(join(repoRoot, 'apps/cli/package.json'));
const { Client, StreamableHTTPClientTransport } = requireFromCli('@modelcontextprotocol/client') as typeof import('@modelcontextprotocol/client');
const { StdioClientTransport } = requireFromCli('@modelcontextprotocol/client/stdio') as typeof import('@modelcontextprotocol/client/stdio');

type AuditRecord = { command?: string; transport?: string; caller?: string; client?: string };

function auditOf(home: string): AuditRecord[] {
  try {
    return readFileSync(join(home, 'audit.log'), 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as AuditRecord);
  } catch {
    return [];
  }
}

it('calls relayed by capnode mcp are audited as mcp-stdio; an HTTP client that sends the relay header without the admin token stays mcp-http', async () => {
  await using test = await startTestHost({ settings: { approvals: { notify: false } } });
  const stdio = new Client({ name: 'relayed-client', version: '1.0.0' });
  await stdio.connect(new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp'], env: { ...(process.env as Record<string, string>), CAPNODE_HOME: test.home }, stderr: 'pipe' }));
  try {
    await stdio.callTool({ name: 'app.status', arguments: {} });
  } finally {
    await stdio.close();
  }
  for (const [name, relay] of [
    ['spoofing-client', `Bearer ${test.mcpToken}`],
    ['guessing-client', 'Bearer not-the-admin-token'],
  ] as const) {
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(test.url), { requestInit: { headers: { Authorization: `Bearer ${test.mcpToken}`, [STDIO_RELAY_HEADER]: relay } } }));
    try {
      await client.callTool({ name: 'app.status', arguments: {} });
    } finally {
      await client.close();
    }
  }
  const records = await eventually(() => {
    const found = auditOf(test.home).filter((record) => record.command === 'app.status');
    return found.length >= 3 ? found : undefined;
  });
  const byCaller = Object.fromEntries(records.map((record) => [record.caller ?? record.client, record.transport]));
  expect(byCaller).toEqual({ 'relayed-client': 'mcp-stdio', 'spoofing-client': 'mcp-http', 'guessing-client': 'mcp-http' });
}, 60_000);
