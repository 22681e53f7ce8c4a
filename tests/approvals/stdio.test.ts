import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliPath, repoRoot, runCli, slowPoll, tempHome } from '../cli/helpers.js';
import { capnodeStdioTransport } from '../support/stdioClient.js';
import { eventually } from '../support/poll.js';

// The SDK client is a devDependency of the CLI package; tests/ has no node_modules of its own.
const requireFromCli = createRequire(join(repoRoot, 'apps/cli/package.json'));
const { Client } = requireFromCli('@modelcontextprotocol/client') as typeof import('@modelcontextprotocol/client');

interface Listed {
  approvals: { id: string; argsHash?: string }[];
}

function spawnTransport(home: string) {
  return capnodeStdioTransport(cliPath, home, { PATH: '/nonexistent-no-notify-send' });
}

describe('approvals over stdio (capnode mcp, real SDK v2 client)', () => {
  it('asks a client that declared elicitation through elicitation/create, with the same truthful summary; its "allow once" runs the call', async () => {
    using dir = tempHome();
    const { transport, stderr } = spawnTransport(dir.home);
    const client = new Client({ name: 'eliciting\u202eclient', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const questions: { message: string; requestedSchema: unknown; mode?: string }[] = [];
    let answer: 'allow-once' | 'deny' = 'allow-once';
    client.setRequestHandler('elicitation/create', async (request) => {
      questions.push(request.params as never);
      return { action: 'accept', content: { decision: answer } };
    });
    await client.connect(transport);
    try {
      const allowed = await client.callTool({ name: 'system.run', arguments: { command: [process.execPath, '-e', 'console.log(6*7)'] } });
      expect(allowed.isError ?? false).toBe(false);
      expect(allowed.structuredContent).toMatchObject({ stdout: '42\n', exitCode: 0 });
      expect(questions).toHaveLength(1);
      const message = questions[0]!.message;
      expect(message).toContain('system.run');
      expect(message).toContain(`program: ${process.execPath}`);
      expect(message).toContain('transport: mcp-stdio');
      expect(message).toContain('caller: eliciting\\u{202e}client (self-reported)');
      expect(message).not.toContain('\u202e');
      expect(message).toMatch(/hash: [0-9a-f]{12}/);
      expect(JSON.stringify(questions[0]!.requestedSchema)).toContain('allow-once');
      // The host's log shows the same request.
      const id = /approval id: ([a-z2-7]{10})/.exec(message)![1]!;
      await eventually(() => (stderr().includes(`capnode approvals allow ${id}`) ? true : undefined), slowPoll('the host log line'));

      answer = 'deny';
      const denied = await client.callTool({ name: 'system.run', arguments: { command: [process.execPath, '-e', '1'] } });
      expect(denied.isError).toBe(true);
      expect(JSON.stringify(denied.content)).toMatch(/denied by the user/);
    } finally {
      await client.close();
    }
  });

  it('a host answer wins over an open elicitation, which is withdrawn', async () => {
    using dir = tempHome();
    const { transport } = spawnTransport(dir.home);
    const client = new Client({ name: 'slow-human', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    let withdrawn = false;
    client.setRequestHandler('elicitation/create', (_request, ctx) =>
      new Promise((_, reject) => {
        ctx.mcpReq.signal.addEventListener('abort', () => {
          withdrawn = true;
          reject(new Error('withdrawn'));
        });
      }),
    );
    await client.connect(transport);
    try {
      const run = client.callTool({ name: 'system.run', arguments: { command: [process.execPath, '-e', 'console.log(1)'] } });
      const approval = await eventually(async () => (JSON.parse((await runCli(['approvals', 'list', '--json'], dir.home)).stdout) as Listed).approvals[0], slowPoll('a pending approval'));
      const allowed = await runCli(['approvals', 'allow', approval.id], dir.home);
      expect(allowed.code, allowed.stderr).toBe(0);
      const result = await run;
      expect(result.isError ?? false).toBe(false);
      await eventually(() => (withdrawn ? true : undefined), slowPoll('the elicitation to be withdrawn'));
    } finally {
      await client.close();
    }
  });
});
