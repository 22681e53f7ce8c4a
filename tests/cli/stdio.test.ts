import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readdirSync, writeFileSync } from 'node:fs';
import { cliPath, repoRoot, runCli, slowPoll, tempHome } from './helpers.js';
import { eventually } from '../support/poll.js';
import { capnodeStdioTransport } from '../support/stdioClient.js';

// The SDK client is a devDependency of the CLI package; tests/ has no node_modules of its own.
const requireFromCli = createRequire(join(repoRoot, 'apps/cli/package.json'));
const { Client } = requireFromCli('@modelcontextprotocol/client') as typeof import('@modelcontextprotocol/client');

describe('capnode mcp (stdio)', () => {
  it('serves the registry to a real SDK client with protocol-only stdout', async () => {
    using dir = tempHome();
    // No hold: this client's first call returns approval_pending at once (the hold is tested in tests/approvals).
    writeFileSync(join(dir.home, 'settings.json'), JSON.stringify({ approvals: { holdMs: 0 } }), { mode: 0o600 });
    const { transport, stderr } = capnodeStdioTransport(cliPath, dir.home);
    const client = new Client({ name: 'capnode-cli-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['device.info', 'system.run', 'system.which', 'app.status']));

      const which = await client.callTool({ name: 'system.which', arguments: { bins: ['node'] } });
      expect(which.isError ?? false).toBe(false);

      const status = await client.callTool({ name: 'app.status', arguments: {} });
      expect(status.structuredContent).toMatchObject({ stdio: { state: 'serving' }, mcp: { state: 'stopped' } });

      const unknown = await client.callTool({ name: 'no.such.tool', arguments: {} });
      expect(unknown.isError).toBe(true);

      // Exec approvals of a stdio host are answered with the same CLI commands.
      expect(readdirSync(join(dir.home, 'run'))).toEqual([expect.stringMatching(/^stdio-\d+\.json$/)]);
      // This client sends no progress token and declares no elicitation: the call returns at once
      // (approval_pending), and the identical retry runs once the approval was allowed.
      const params = { name: 'system.run', arguments: { command: [process.execPath, '-e', 'console.log(6*7)'] } };
      const first = await client.callTool(params);
      expect(first.isError).toBe(true);
      expect(JSON.stringify(first.content)).toContain('capnode approvals allow');
      const approval = await eventually(async () => {
        const listed = JSON.parse((await runCli(['approvals', 'list', '--json'], dir.home)).stdout) as { approvals: { id: string }[] };
        return listed.approvals[0];
      }, slowPoll('a pending approval from the stdio host'));
      const allowed = await runCli(['approvals', 'allow', approval.id], dir.home);
      expect(allowed.code, allowed.stderr).toBe(0);
      const result = await client.callTool(params);
      expect(result.isError ?? false).toBe(false);
      expect(result.structuredContent).toMatchObject({ stdout: '42\n', exitCode: 0 });
      expect(stderr()).toContain(`capnode approvals allow ${approval.id}`);
    } finally {
      await client.close();
    }
    expect(stderr()).not.toMatch(/unexpected error/i);
    // The run file goes away with the process.
    await eventually(async () => (readdirSync(join(dir.home, 'run')).length === 0 ? true : undefined), slowPoll('the stdio run file to be removed'));
  });
});
