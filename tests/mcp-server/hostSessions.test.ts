import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startTestHost } from '../support/testHost.js';
import { registerUntilListChanged } from './helpers.js';

describe('capnode host (as `capnode serve` runs it)', () => {
  it('serves initialize-era sessions by default: list_changed reaches the client when tools appear', async () => {
    await using ctx = await startTestHost();
    const token = readFileSync(join(ctx.home, 'mcp-token'), 'utf8').trim();
    let changes = 0;
    const client = new Client(
      { name: 'host-session', version: '1.0.0' },
      { versionNegotiation: { mode: 'legacy' }, listChanged: { tools: { onChanged: () => void (changes += 1) } } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(ctx.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    await client.connect(transport);
    try {
      expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
      await registerUntilListChanged(ctx.host.registry, () => changes, 'tools/list_changed from the host');
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('late.hello');
    } finally {
      await client.close();
    }
  });
});
