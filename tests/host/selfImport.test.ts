import { writeFileSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { join } from 'node:path';
import { createHost } from '@capnode/host';
import { expect, test } from 'vitest';
import { freePort } from '../support/net.js';
import { eventually } from '../support/poll.js';
import { tempDir } from '../support/testHost.js';

const TOKEN = 'selfimporttoken0123456789abcdefABCDEF0123456789';

/** A plain TCP forwarder: another port that reaches the host, which the entry's URL alone does not tell. */
async function forwarder(port: number): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((socket) => {
    const upstream = connect(port, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { port: address.port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

test("a host whose imports point at itself (its URL, capnode mcp, another port to it) refuses each with self_host and stays bounded", async () => {
  using dir = tempDir();
  const port = await freePort();
  await using proxy = { ...(await forwarder(port)), async [Symbol.asyncDispose]() {} };
  writeFileSync(join(dir.path, 'mcp-token'), `${TOKEN}\n`, { mode: 0o600 });
  const auth = { Authorization: `Bearer ${TOKEN}` };
  const servers = [
    { name: 'byurl', url: `http://localhost:${port}/mcp`, headers: auth },
    { name: 'bycmd', command: 'npx', args: ['-y', 'capnode', 'mcp'] },
    { name: 'byproxy', url: `http://127.0.0.1:${proxy.port}/`, headers: auth },
  ];
  writeFileSync(join(dir.path, 'settings.json'), JSON.stringify({ mcp: { port }, approvals: { notify: false }, mcpClient: { reexport: true, servers } }), { mode: 0o600 });
  const logs: string[] = [];
  const host = createHost({ home: dir.path, onLog: (level, message) => logs.push(`${level}: ${message}`) });
  try {
    await host.start();
    await host.importsReady();
    const imports = await eventually(() => {
      const current = host.status().mcpClient;
      return current.servers.every((server) => server.state === 'failed') ? current : undefined;
    });
    expect(imports.servers.map((server) => [server.server, server.errorCode])).toEqual([
      ['byurl', 'self_host'],
      ['bycmd', 'self_host'],
      ['byproxy', 'self_host'],
    ]);
    expect(imports.toolCount).toBe(0);
    expect(host.registry.commands().filter((command) => command.category === 'mcp')).toEqual([]);
    expect(logs.join('\n')).toMatch(/mcp server 'byproxy' failed to connect: it declared this host's own id \(a host of the same config directory\), so it is this capnode host itself/);
  } finally {
    await host.close();
    await proxy.close();
  }
}, 60_000);
