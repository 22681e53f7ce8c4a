import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, type Progress } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { everythingServer } from '../../../../../tests/support/mcpServers.js';
import { createHost } from '../../host/host.js';

const LONG = 'everything__trigger-long-running-operation';
let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'capnode-host-trust-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

function writeSettings(mcpClient: Record<string, unknown>): void {
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ mcpClient }));
}

async function connect(url: string): Promise<Client> {
  const token = readFileSync(join(home, 'mcp-token'), 'utf8').trim();
  const client = new Client({ name: 'host-trust-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

describe('host re-export of untrusted servers', () => {
  it("republishes a server's hints as its claim, forwards progress to the host's client, and trusts hints only when told", async () => {
    writeSettings({ reexport: true, servers: [everythingServer()], risk_profiles: { capnode: { auto_approve: [LONG] } } });
    const host = createHost({ home, port: 0, builtins: false, onLog: () => {} });
    const status = await host.start();
    await host.importsReady();
    const client = await connect(status.mcp.url!);
    try {
      const long = (await client.listTools()).tools.find((tool) => tool.name === LONG)!;
      // server-everything puts its title beside the annotations, so there is no annotation left to show.
      expect(long.annotations).toBeUndefined();
      expect(long.description).toContain("[capnode: hints declared by server 'everything', not verified: readOnlyHint=true, destructiveHint=false");
      const seen: Progress[] = [];
      const result = await client.callTool({ name: LONG, arguments: { duration: 0.3, steps: 3 } }, { onprogress: (progress) => seen.push(progress) });
      expect(JSON.stringify(result.content)).toContain('Long running operation completed');
      expect(seen.map((progress) => progress.progress)).toEqual([1, 2, 3]);
    } finally {
      await client.close();
      await host.close();
    }

    writeSettings({ reexport: true, servers: [{ ...everythingServer(), trusted: true }] });
    const trusting = createHost({ home, port: 0, builtins: false, onLog: () => {} });
    const again = await trusting.start();
    await trusting.importsReady();
    const second = await connect(again.mcp.url!);
    try {
      const long = (await second.listTools()).tools.find((tool) => tool.name === LONG)!;
      expect(long.annotations).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
      expect(long.description).not.toContain('not verified');
    } finally {
      await second.close();
      await trusting.close();
    }
  });

  it('expands ${ENV} in server env when the client starts; an unset variable fails the imports, not the host, and the file keeps the reference', async () => {
    const server = { ...everythingServer(), env: { PROBE: '${CAPNODE_TRUST_TEST_VAR}' } };
    writeSettings({ reexport: true, servers: [server] });
    delete process.env.CAPNODE_TRUST_TEST_VAR;
    const failing = createHost({ home, port: 0, builtins: false, onLog: () => {} });
    const status = await failing.start();
    await failing.importsReady();
    expect(status.mcp.state).toBe('listening');
    expect(failing.status().mcpClient).toMatchObject({ state: 'failed', error: expect.stringContaining('servers[0].env.PROBE: references the unset environment variable CAPNODE_TRUST_TEST_VAR') });
    await failing.close();

    process.env.CAPNODE_TRUST_TEST_VAR = 'expanded-value';
    try {
      const host = createHost({ home, port: 0, builtins: false, onLog: () => {} });
      await host.start();
      await host.importsReady();
      expect(host.status().mcpClient.servers[0]).toMatchObject({ server: 'everything', state: 'connected' });
      await host.close();
    } finally {
      delete process.env.CAPNODE_TRUST_TEST_VAR;
    }
    expect(JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')).mcpClient.servers[0].env.PROBE).toBe('${CAPNODE_TRUST_TEST_VAR}');
  });
});
