// The `capnode/host` marker is the config directory's id: a `capnode mcp` behind a wrapper script
// (which no entry check sees through) is refused by a host of the same CAPNODE_HOME, whether it relays
// to an HTTP host that was up first or, no HTTP host being up, runs a host of its own.
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { capnodeStdioTransport } from '../support/stdioClient.js';
import { eventually } from '../support/poll.js';
import { cliPath, repoRoot, runCli, slowPoll, startServe, tempHome } from './helpers.js';

const requireFromCli = createRequire(join(repoRoot, 'apps/cli/package.json'));
const { Client } = requireFromCli('@modelcontextprotocol/client') as typeof import('@modelcontextprotocol/client');

interface ImportStatus {
  readonly mcpClient: { readonly servers: ReadonlyArray<{ server: string; state: string; errorCode?: string }> };
}

/**
 * Writes a shell script that runs `capnode mcp` on `home` (at most 3 times in all, counted in
 * `<home>/../spawns`, so a host that failed to recognise itself cannot nest without end) and a
 * settings.json importing it as `wrapped`. With `waitForHost`, the script first waits for `host.json`.
 */
function importWrapped(home: string, waitForHost: boolean): string {
  const spawns = join(home, 'spawns.log');
  const script = join(home, 'wrapped-capnode.sh');
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      `echo x >> '${spawns}'`,
      `[ "$(wc -l < '${spawns}')" -gt 3 ] && exit 3`,
      waitForHost ? `i=0; while [ ! -f '${join(home, 'host.json')}' ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done` : '',
      `CAPNODE_HOME='${home}' exec '${process.execPath}' '${cliPath}' mcp`,
      '',
    ].join('\n'),
  );
  chmodSync(script, 0o700);
  const servers = [{ name: 'wrapped', command: '/bin/sh', args: [script] }];
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ mcp: { port: 0 }, approvals: { notify: false }, mcpClient: { reexport: true, servers } }), { mode: 0o600 });
  return spawns;
}

describe('a host refuses a capnode mcp of its own config directory (capnode/host marker)', () => {
  it('an HTTP host up first: the wrapped capnode mcp relays to it and is refused with self_host', async () => {
    using dir = tempHome();
    importWrapped(dir.home, true);
    await using serve = await startServe(dir.home);
    const status = await eventually(async () => {
      const result = await runCli(['status', '--json'], dir.home);
      const json = JSON.parse(result.stdout) as ImportStatus;
      return json.mcpClient.servers[0]?.state === 'failed' ? json : undefined;
    }, slowPoll('the wrapped import to fail'));
    expect(status.mcpClient.servers.map((server) => [server.server, server.errorCode])).toEqual([['wrapped', 'self_host']]);
    expect(serve.stderr()).toMatch(/mcp server 'wrapped' failed to connect: it declared this host's own id/);
    // The marker: a random id persisted 0600 in the config directory on first start.
    expect(readFileSync(join(dir.home, 'host-id'), 'utf8')).toMatch(/^[0-9a-f]{32}\n$/);
    expect(statSync(join(dir.home, 'host-id')).mode & 0o777).toBe(0o600);
  }, 60_000);

  it('no HTTP host up: the wrapped capnode mcp runs a host of its own, and the stdio host that imports it still refuses it', async () => {
    using dir = tempHome();
    importWrapped(dir.home, false);
    const { transport, stderr } = capnodeStdioTransport(cliPath, dir.home);
    const client = new Client({ name: 'capnode-self-import-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const status = await eventually(async () => {
        const result = await client.callTool({ name: 'app.status', arguments: {} });
        const json = result.structuredContent as unknown as ImportStatus;
        return json.mcpClient.servers[0]?.state === 'failed' ? json : undefined;
      }, slowPoll('the wrapped import to fail'));
      expect(status.mcpClient.servers.map((server) => [server.server, server.errorCode]), stderr()).toEqual([['wrapped', 'self_host']]);
    } finally {
      await client.close();
    }
  }, 60_000);
});
