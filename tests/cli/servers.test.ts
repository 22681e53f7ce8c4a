import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { completion, runCli, slowPoll, spawnCli, startServe, tempHome } from './helpers.js';
import { everythingScript, hangingServer } from '../support/mcpServers.js';
import { eventually, isAlive } from '../support/poll.js';

const posix = process.platform !== 'win32';

function settingsOf(home: string): Record<string, any> {
  return JSON.parse(readFileSync(join(home, 'settings.json'), 'utf8')) as Record<string, any>;
}

function writeSettings(home: string, mcpClient: Record<string, unknown>): void {
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ mcpClient }));
}

const addEverything = ['servers', 'add', 'everything', '--command', process.execPath, '--', everythingScript, 'stdio'];
const addBroken = ['servers', 'add', 'broken', '--command', process.execPath, '--args', JSON.stringify(['-e', 'console.error("missing API key"); process.exit(3)'])];

describe('capnode servers', () => {
  it('adds servers, lists them with secrets masked, tests them and removes them', async () => {
    using dir = tempHome();
    const added = await runCli(['servers', 'add', 'everything', '--env', 'API_KEY=secret-value-123', '--env', 'MODE=a=b', ...addEverything.slice(3)], dir.home);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain("added MCP server 'everything' (stdio:");
    expect(added.stdout).not.toContain('secret-value-123');
    expect(added.stderr).toContain('capnode servers test everything');
    expect((await runCli(addBroken, dir.home)).code).toBe(0);
    const remote = await runCli(['servers', 'add', 'remote', '--url', 'https://mcp.example.com/mcp?api_key=secret-query-789', '--header', 'Authorization: Bearer secret-token-456'], dir.home);
    expect(remote.code, remote.stderr).toBe(0);

    const saved = settingsOf(dir.home).mcpClient;
    expect(saved.servers[0]).toEqual({ name: 'everything', command: process.execPath, args: [everythingScript, 'stdio'], env: { API_KEY: 'secret-value-123', MODE: 'a=b' } });
    expect(saved.servers[2]).toEqual({ name: 'remote', url: 'https://mcp.example.com/mcp?api_key=secret-query-789', headers: { Authorization: 'Bearer secret-token-456' } });
    if (posix) expect(statSync(join(dir.home, 'settings.json')).mode & 0o777).toBe(0o600);

    const listed = await runCli(['servers', 'list'], dir.home);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/everything\s+stdio\s+yes/);
    expect(listed.stdout).toMatch(/remote\s+http\s+yes\s+https:\/\/mcp\.example\.com\/mcp/);
    expect(listed.stdout).toContain('API_KEY=<redacted, 16 chars>');
    expect(listed.stdout).toContain('Authorization=<redacted, 23 chars>');
    expect(listed.stdout).toContain('re-export through the host: off');
    const listedJson = await runCli(['servers', 'list', '--json'], dir.home);
    expect(JSON.parse(listedJson.stdout).servers.map((server: { name: string }) => server.name)).toEqual(['everything', 'broken', 'remote']);
    for (const output of [listed.stdout, listed.stderr, listedJson.stdout]) {
      for (const secret of ['secret-value-123', 'secret-token-456', 'secret-query-789']) expect(output).not.toContain(secret);
    }

    const tested = await runCli(['servers', 'test', 'everything', 'broken'], dir.home);
    expect(tested.code, tested.stderr).toBe(1);
    expect(tested.stdout).toMatch(/^everything: connected \(stdio, [\d.]+ m?s, mcp-servers\/everything [\d.]+\) — \d+ tools$/m);
    expect(tested.stdout).toMatch(/^ {2}everything__echo\s+Echoes back the input string$/m);
    expect(tested.stdout).toContain('everything__get-sum');
    expect(tested.stdout).toMatch(/^broken: FAILED \(stdio, failed\): .*server process exited \(code 3\); stderr: missing API key$/m);
    expect(tested.stdout).toContain('1 of 2 servers connected; failed: broken');
    expect(tested.stdout + tested.stderr).not.toContain('secret-value-123');

    const one = await runCli(['servers', 'test', 'EVERYTHING', '--json'], dir.home);
    expect(one.code, one.stderr).toBe(0);
    const [diagnostic] = JSON.parse(one.stdout).servers;
    expect(diagnostic).toMatchObject({ server: 'everything', state: 'connected', transport: 'stdio' });
    expect(diagnostic.connectMs).toBeGreaterThan(0);
    expect(diagnostic.tools.length).toBe(diagnostic.toolCount);
    expect(diagnostic.tools.map((tool: { name: string }) => tool.name)).toContain('everything__echo');

    const removed = await runCli(['servers', 'remove', 'broken'], dir.home);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain("removed MCP server 'broken'");
    expect(settingsOf(dir.home).mcpClient.servers.map((server: { name: string }) => server.name)).toEqual(['everything', 'remote']);
    const missing = await runCli(['servers', 'remove', 'brokn'], dir.home);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no MCP server named 'brokn'");
  }, 60_000);

  it('refuses bad entries with the path and reason, without touching settings.json', async () => {
    using dir = tempHome();
    const refused = await runCli(['servers', 'add', 'bad', '--command', 'node', '--env', 'NODE_OPTIONS=--require=/tmp/evil.js'], dir.home);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('mcpClient.servers[0].env.NODE_OPTIONS: is refused');
    expect(refused.stderr).not.toContain('/tmp/evil.js');
    expect(existsSync(join(dir.home, 'settings.json'))).toBe(false);

    const badUrl = await runCli(['servers', 'add', 'web', '--url', 'ftp://example.com/'], dir.home);
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toContain('mcpClient.servers[0].url: must use http:// or https://');

    expect((await runCli(addEverything, dir.home)).code).toBe(0);
    const before = readFileSync(join(dir.home, 'settings.json'), 'utf8');
    const duplicate = await runCli(['servers', 'add', 'Everything', '--command', 'node'], dir.home);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain("an MCP server named 'everything' is already configured");
    const mixed = await runCli(['servers', 'add', 'web', '--url', 'https://example.com/mcp', '--env', 'A=1'], dir.home);
    expect(mixed.code).toBe(1);
    expect(mixed.stderr).toContain('mcpClient.servers[1].env: is not used by a http server');
    expect(readFileSync(join(dir.home, 'settings.json'), 'utf8')).toBe(before);

    const usage: [string[], RegExp][] = [
      [['servers', 'add', 'x'], /needs --command <cmd> \(stdio\) or --url <url>/],
      [['servers', 'add', 'x', '--command', 'a', '--url', 'http://127.0.0.1:1/'], /either --command .* or --url/],
      [['servers', 'add', 'x', '--command', 'a', '--args', '[1]'], /--args must be a JSON array of strings/],
      [['servers', 'add', 'x', '--command', 'a', '--args', '["a"', '--', 'b'], /--args is not valid JSON|either with --args or after --/],
      [['servers', 'add', 'x', 'stray', '--command', 'a'], /unexpected argument 'stray'/],
      [['servers', 'add', 'x', '--command', 'a', '--env', 'NOVALUE'], /--env expects NAME=value/],
      [['servers', 'list', '--command', 'a'], /--command applies to capnode servers add only/],
      [['servers', 'test', 'nope'], /no MCP server named 'nope'/],
      [['servers', 'frob'], /unknown action 'frob'/],
      [['servers', 'reexport', 'maybe'], /usage: capnode servers reexport on\|off/],
    ];
    for (const [args, message] of usage) {
      const result = await runCli(args, dir.home);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
    }
    expect(readFileSync(join(dir.home, 'settings.json'), 'utf8')).toBe(before);
  }, 60_000);

  it('a server that never answers fails at its connect timeout without holding up the others', async () => {
    using dir = tempHome();
    const pidFile = join(dir.home, 'hang.pid');
    writeSettings(dir.home, { servers: [hangingServer('hang', pidFile, 3), { name: 'everything', command: process.execPath, args: [everythingScript, 'stdio'] }] });
    const tested = await runCli(['servers', 'test'], dir.home);
    expect(tested.code).toBe(1);
    expect(tested.stdout).toMatch(/^everything: connected \(stdio/m);
    expect(tested.stdout).toMatch(/^hang: FAILED \(stdio, failed\): did not finish connecting within 3 s$/m);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await eventually(async () => (isAlive(pid) ? undefined : true), slowPoll('the hanging server to be gone'));
  }, 60_000);

  it('a failed tools/list is a failure (exit 1); a stubborn server does not hold servers test past one connect timeout plus a small constant', async () => {
    using dir = tempHome();
    const fixture = join(import.meta.dirname, '../mcp-client/fixtures/stdioServer.mjs');
    writeSettings(dir.home, {
      servers: [
        { name: 'unlisted', command: process.execPath, args: [fixture, 'hang-list'], connect_timeout_secs: 8 },
        { name: 'stubborn', command: process.execPath, args: [fixture, 'ignore-term'], connect_timeout_secs: 8 },
      ],
    });
    const started = performance.now();
    const tested = await runCli(['servers', 'test'], dir.home);
    // Connect and first listing share the 8 s; close of a server ignoring SIGTERM takes about 2 s.
    expect(performance.now() - started).toBeLessThan(8_000 + 9_000);
    expect(tested.code, tested.stderr).toBe(1);
    expect(tested.stdout).toMatch(/^unlisted: FAILED \(stdio, connected, tools\/list failed\): tools\/list failed: no answer within \d+ s$/m);
    expect(tested.stdout).toMatch(/^stubborn: connected \(stdio/m);
    expect(tested.stdout).toContain('1 of 2 servers connected; failed: unlisted');

    const startedAll = performance.now();
    const all = await runCli(['tools', '--all'], dir.home);
    expect(performance.now() - startedAll).toBeLessThan(8_000 + 9_000);
    expect(all.stderr).toMatch(/MCP server 'unlisted' connected but its tools could not be listed: tools\/list failed: no answer within \d+ s/);
    expect(all.stdout).toContain('stubborn__echo');
  }, 90_000);

  it('imports Claude Desktop / .mcp.json files, expanding ${VAR} and skipping names already configured', async () => {
    using dir = tempHome();
    expect((await runCli(addEverything, dir.home)).code).toBe(0);
    const file = join(dir.home, 'claude_desktop_config.json');
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] },
          memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'], env: { MEMORY_FILE_PATH: '${MEMORY_FILE}' } },
          api: { type: 'streamable-http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${API_TOKEN}' }, autoApprove: ['x'] },
        },
      }),
    );
    const imported = await runCli(['servers', 'import', file], dir.home, { MEMORY_FILE: '/tmp/memory.json', API_TOKEN: 'imported-secret-42' });
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('imported 2 MCP servers');
    expect(imported.stdout).toContain('memory, api');
    expect(imported.stderr).toContain('skipped (already configured): everything');
    expect(imported.stderr).toMatch(/autoApprove/);
    const servers = settingsOf(dir.home).mcpClient.servers as Record<string, unknown>[];
    expect(servers.map((server) => server.name)).toEqual(['everything', 'memory', 'api']);
    expect(servers[2]).toMatchObject({ transport: 'http', headers: { Authorization: 'Bearer imported-secret-42' } });
    const listed = await runCli(['servers', 'list'], dir.home);
    expect(listed.stdout).toMatch(/api\s+http\s+yes/);
    expect(listed.stdout).not.toContain('imported-secret-42');

    const unset = join(dir.home, 'unset.json');
    writeFileSync(unset, JSON.stringify({ mcpServers: { other: { command: 'x', env: { KEY: '${NOT_SET_ANYWHERE}' } } } }));
    const failed = await runCli(['servers', 'import', unset], dir.home);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('nothing was changed');
    expect(failed.stderr).toContain('NOT_SET_ANYWHERE');
    expect((settingsOf(dir.home).mcpClient.servers as unknown[]).length).toBe(3);
  }, 60_000);

  it('tools --all and call connect the configured servers from the CLI when no host runs', async () => {
    using dir = tempHome();
    expect((await runCli(addEverything, dir.home)).code).toBe(0);
    const listed = await runCli(['tools', '--all', '--url', 'http://127.0.0.1:9/'], dir.home);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toContain('no capnode host is running');
    expect(listed.stdout).toMatch(/^everything__echo\s+Echoes back the input string$/m);
    expect(listed.stdout).toContain("call one with: capnode call <name> --params '<json>'");

    // The CLI's own pipeline asks as the host would (default risk profile); without a terminal it refuses, saying so.
    const denied = await runCli(['call', 'everything__echo', '--params', '{"message":"hello locally"}', '--url', 'http://127.0.0.1:9/'], dir.home);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain(`capnode: denied: everything__echo (tool 'echo' of MCP server 'everything') wants to run with {"message":"hello locally"} — it needs your approval and capnode call has no terminal to ask on`);
    const settings = settingsOf(dir.home);
    settings.mcpClient.risk_profiles = { capnode: { auto_approve: ['everything__echo'] } };
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify(settings), { mode: 0o600 });
    const called = await runCli(['call', 'everything__echo', '--params', '{"message":"hello locally"}', '--url', 'http://127.0.0.1:9/'], dir.home);
    expect(called.code, called.stderr).toBe(0);
    expect(called.stdout.trim()).toBe('Echo: hello locally');
    // Both calls are in the audit log, as the host would write them.
    const audit = readFileSync(join(dir.home, 'audit.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(audit.filter((record) => record.command === 'everything__echo').map((record) => record.outcome)).toEqual(['denied', 'ok']);

    const typo = await runCli(['call', 'everything__ecko', '--url', 'http://127.0.0.1:9/'], dir.home);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain("unknown tool 'everything__ecko' — did you mean: everything__echo?");
    const unknownServer = await runCli(['call', 'nowhere__echo', '--url', 'http://127.0.0.1:9/'], dir.home);
    expect(unknownServer.code).toBe(1);
    expect(unknownServer.stderr).toContain("no configured MCP server is named 'nowhere'");
    const badParams = await runCli(['call', 'everything__echo', '--params', '{'], dir.home);
    expect(badParams.code).toBe(2);
  }, 60_000);
});

describe('capnode serve with mcpClient.reexport', () => {
  it('serves imported tools beside built-ins: --list-tools, --command (approved once, then always), call, tools --all, status', async () => {
    using dir = tempHome();
    expect((await runCli(addEverything, dir.home)).code).toBe(0);
    expect((await runCli(addBroken, dir.home)).code).toBe(0);
    const on = await runCli(['servers', 'reexport', 'on'], dir.home);
    expect(on.code).toBe(0);
    expect(settingsOf(dir.home).mcpClient.reexport).toBe(true);

    await using serve = await startServe(dir.home);
    expect(serve.stdout()).toContain('re-exporting 2 servers as <server>__<tool>');
    await serve.waitForStderr(/imported MCP tools ready: \d+ tools from 1 of 2 servers/, 30_000);
    expect(serve.stderr()).toMatch(/MCP server 'everything' connected \(stdio, \d+ ms, \d+ tools\)/);
    expect(serve.stderr()).toContain("mcp server 'broken' failed to connect");

    const listed = await runCli(['--list-tools'], dir.home);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^everything__echo\s+Echoes back the input string$/m);
    expect(listed.stdout).toMatch(/^device\.info\s/m);

    // The default risk profile asks first, through the host's approvals.
    const call = spawnCli(['--command', 'everything__echo', '--params', '{"message":"via host"}'], dir.home);
    call.stdin.end();
    const done = completion(call);
    const approval = await eventually(async () => {
      const pending = await runCli(['approvals', 'list', '--json'], dir.home);
      return (JSON.parse(pending.stdout).approvals as { id: string; command: string }[])[0];
    }, slowPoll('a pending approval'));
    expect(approval.command).toBe('everything__echo');
    await serve.waitForStderr(new RegExp(`approval needed \\(${approval.id}\\):\\n  everything__echo[\\s\\S]*capnode approvals allow ${approval.id}`));
    const allowed = await runCli(['approvals', 'allow', approval.id, '--always'], dir.home);
    expect(allowed.code, allowed.stderr).toBe(0);
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe('Echo: via host');
    expect(settingsOf(dir.home).mcpClient.risk_profiles.capnode.auto_approve).toEqual(['everything__echo']);

    // Now approved automatically; `call` goes through the host too (its audit log shows it).
    const again = await runCli(['call', 'everything__echo', '--params', '{"message":"again"}'], dir.home);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe('Echo: again');
    const audit = readFileSync(join(dir.home, 'audit.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(audit.filter((record) => record.command === 'everything__echo' && record.outcome === 'ok')).toHaveLength(2);

    const all = await runCli(['tools', '--all'], dir.home);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^everything__echo\s/m);
    expect(all.stdout).toMatch(/^system\.run\s/m);
    expect(all.stderr).toMatch(/MCP server 'broken' \(in the host\) failed to connect: .*exited \(code 3\)/);

    const status = await runCli(['status', '--json'], dir.home);
    const imports = JSON.parse(status.stdout).mcpClient;
    expect(imports).toMatchObject({ reexport: true, state: 'ready', agent: 'capnode' });
    expect(imports.servers.map((server: { server: string; state: string }) => `${server.server}:${server.state}`)).toEqual(['everything:connected', 'broken:failed']);

    expect(await serve.stop()).toBe(0);
  }, 90_000);

  it('starts at once beside a server that never answers and ends it on shutdown', async () => {
    using dir = tempHome();
    const pidFile = join(dir.home, 'hang.pid');
    writeSettings(dir.home, { reexport: true, servers: [hangingServer('hang', pidFile, 300)] });
    const serve = await startServe(dir.home);
    const status = JSON.parse((await runCli(['status', '--json'], dir.home)).stdout).mcpClient;
    expect(status).toMatchObject({ reexport: true, state: 'starting', servers: [{ server: 'hang', state: 'connecting' }] });
    const pid = await eventually(async () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) || undefined : undefined), slowPoll('the hanging server to start'));
    expect((await runCli(['--list-tools'], dir.home)).code).toBe(0);
    expect(await serve.stop()).toBe(0);
    await eventually(async () => (isAlive(pid) ? undefined : true), slowPoll('the hanging server to be gone'));
  }, 60_000);
});
