// Tool names for every harness on a real host: every pack tool and server-everything's imported tools
// fit OpenAI's function-name pattern on an underscore connection (setting, query parameter, and
// `capnode mcp` over stdio); both spellings call the same command; audit shows the dotted name.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectHttpClient, startTestHost, type TestHost } from '../support/testHost.js';
import { everythingServer } from '../support/mcpServers.js';
import { eventually } from '../support/poll.js';
import { capnodeStdioTransport } from '../support/stdioClient.js';
import { cliPath, repoRoot, runCli, slowPoll, startServe, tempHome } from '../cli/helpers.js';

const requireFromCli = createRequire(join(repoRoot, 'apps/cli/package.json'));
const { Client } = requireFromCli('@modelcontextprotocol/client') as typeof import('@modelcontextprotocol/client');

const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const imported = { mcpClient: { reexport: true, servers: [everythingServer()] } };

type Lister = { listTools(): Promise<{ tools: { name: string }[] }> };

/** The whole `tools/list` once server-everything's tools arrived. */
async function namesWithImports(client: Lister, importedName: string): Promise<string[]> {
  return eventually(async () => {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    return names.includes(importedName) ? names : undefined;
  }, slowPoll('the imported tools of server-everything', 40_000));
}

function auditCommands(host: TestHost): string[] {
  return readFileSync(join(host.home, 'audit.log'), 'utf8').trim().split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { command: string }).command);
}

describe('tool names for every harness', () => {
  it('mcp.toolNames underscore: the whole tools/list fits ^[a-zA-Z0-9_-]{1,64}$, both spellings call alike, audit shows the dotted name', async () => {
    await using t = await startTestHost({ settings: { mcp: { toolNames: 'underscore' }, ...imported } });
    const names = await namesWithImports(t.client, 'everything__echo');
    expect(names).toEqual(expect.arrayContaining(['system_run', 'system_which', 'device_info', 'everything__echo']));
    expect(names.filter((name) => !OPENAI_NAME.test(name))).toEqual([]);
    expect(names.length).toBe(t.host.registry.commands().length);

    const underscore = await t.call('system_which', { bins: ['node'] });
    const dotted = await t.call('system.which', { bins: ['node'] });
    expect(underscore.isError).toBe(false);
    expect(underscore).toEqual(dotted);
    await eventually(() => auditCommands(t).filter((command) => command === 'system.which').length === 2, { what: 'both calls in audit.log' });
    expect(auditCommands(t)).not.toContain('system_which');

    // An approval asked for a call by its underscore spelling names the dotted command.
    t.answerWith('allow-once');
    const run = await t.call('system_run', { command: [process.execPath, '-e', 'console.log(6*7)'] });
    expect(run.isError).toBe(false);
    expect(t.asked.map((approval) => approval.command)).toEqual(['system.run']);
    await eventually(() => auditCommands(t).includes('system.run'), { what: 'the run in audit.log' });
    expect(auditCommands(t)).not.toContain('system_run');
  }, 90_000);

  it('default dotted; ?toolNames=underscore on the URL selects underscore for that connection only', async () => {
    await using t = await startTestHost({ settings: imported });
    const token = readFileSync(join(t.home, 'mcp-token'), 'utf8').trim();
    const dotted = await namesWithImports(t.client, 'everything__echo');
    expect(dotted).toContain('system.run');
    const client = await connectHttpClient(`${t.url}?toolNames=underscore`, token, 'openai-harness');
    try {
      const names = await namesWithImports(client, 'everything__echo');
      expect(names.filter((name) => !OPENAI_NAME.test(name))).toEqual([]);
      expect(names).toEqual(dotted.map((name) => name.replaceAll('.', '_')));
    } finally {
      await client.close();
    }
  }, 90_000);

  it('capnode mcp --tool-names underscore (stdio, real SDK v2 client): the whole tools/list fits the pattern', async () => {
    using dir = tempHome();
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify({ approvals: { holdMs: 0 }, ...imported }), { mode: 0o600 });
    const { transport } = capnodeStdioTransport(cliPath, dir.home, {}, ['--tool-names', 'underscore']);
    const client = new Client({ name: 'openai-stdio', version: '1.0.0' });
    await client.connect(transport);
    try {
      const names = await namesWithImports(client, 'everything__echo');
      expect(names).toContain('system_run');
      expect(names.filter((name) => !OPENAI_NAME.test(name))).toEqual([]);
      const a = await client.callTool({ name: 'system_which', arguments: { bins: ['node'] } });
      const b = await client.callTool({ name: 'system.which', arguments: { bins: ['node'] } });
      expect(a.isError ?? false).toBe(false);
      expect(a).toEqual(b);
    } finally {
      await client.close();
    }
    const audit = readFileSync(join(dir.home, 'audit.log'), 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { command: string }).command);
    expect(audit.filter((command) => command === 'system.which')).toHaveLength(2);
  }, 90_000);

  it('capnode mcp relaying to a running host: mcp.toolNames applies, --tool-names selects per connection, the host audits the dotted name', async () => {
    using dir = tempHome();
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify({ mcp: { toolNames: 'underscore' }, approvals: { holdMs: 0 }, dashboard: { enabled: false } }), { mode: 0o600 });
    await using serve = await startServe(dir.home);
    const connect = async (args: string[]) => {
      const { transport, stderr } = capnodeStdioTransport(cliPath, dir.home, {}, args);
      const client = new Client({ name: 'relayed', version: '1.0.0' });
      await client.connect(transport);
      return { client, stderr };
    };
    const underscore = await connect([]);
    const dotted = await connect(['--tool-names', 'dotted']);
    try {
      const names = (await underscore.client.listTools()).tools.map((tool) => tool.name);
      expect(underscore.stderr()).toContain(`relaying to the running host at ${serve.url}`);
      expect(names).toContain('system_which');
      expect(names.filter((name) => !OPENAI_NAME.test(name))).toEqual([]);
      expect((await dotted.client.listTools()).tools.map((tool) => tool.name)).toContain('system.which');
      const result = await underscore.client.callTool({ name: 'system_which', arguments: { bins: ['node'] } });
      expect(result.isError ?? false).toBe(false);
    } finally {
      await Promise.all([underscore.client.close(), dotted.client.close()]);
    }
    const audit = await eventually(() => {
      const text = readFileSync(join(dir.home, 'audit.log'), 'utf8');
      return text.includes('system.which') ? text : undefined;
    }, slowPoll('the relayed call in the host audit.log'));
    expect(audit).not.toContain('system_which');
    const bad = await runCli(['mcp', '--tool-names', 'snake'], dir.home);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--tool-names must be 'dotted' (system.run) or 'underscore' (system_run), got \"snake\"");
  }, 90_000);
});
