import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { cliPath, repoRoot, slowPoll, tempHome } from './helpers.js';
import { pipelineCarriesElicit } from '../support/pipelineProbe.js';
import { eventually } from '../support/poll.js';

// The SDK client is a devDependency of the CLI package; tests/ has no node_modules of its own.
const requireFromCli = createRequire(join(repoRoot, 'apps/cli/package.json'));
const { Client } = requireFromCli('@modelcontextprotocol/client') as typeof import('@modelcontextprotocol/client');
const { StdioClientTransport } = requireFromCli('@modelcontextprotocol/client/stdio') as typeof import('@modelcontextprotocol/client/stdio');

const fixture = join(import.meta.dirname, '../mcp-client/fixtures/stdioServer.mjs');

it.runIf(await pipelineCarriesElicit())(
  "capnode mcp forwards an imported server's elicitation to its own client that declared elicitation",
  async () => {
    using dir = tempHome();
    writeFileSync(
      join(dir.home, 'settings.json'),
      JSON.stringify({
        mcpClient: {
          reexport: true,
          servers: [{ name: 'fx', command: process.execPath, args: [fixture, 'features'], env: { SECRET_TOKEN: 'sk-live-0123456789abcdefSECRET' } }],
          risk_profiles: { capnode: { autonomy: 'full' } },
        },
      }),
    );
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cliPath, 'mcp'],
      env: { ...(process.env as Record<string, string>), CAPNODE_HOME: dir.home, PATH: '/nonexistent-no-notify-send' },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'eliciting-client', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const questions: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      questions.push(request.params.message);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    await client.connect(transport);
    try {
      await eventually(async () => ((await client.listTools()).tools.some((tool) => tool.name === 'fx__ask') ? true : undefined), slowPoll('the imported tools'));
      const params = { message: 'Your name? (token sk-live-0123456789abcdefSECRET)', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } };
      const result = await client.callTool({ name: 'fx__ask', arguments: { method: 'elicitation/create', params } });
      expect(result.isError ?? false).toBe(false);
      const text = (result.content as { text: string }[])[0]!.text;
      expect(JSON.parse(text)).toEqual({ result: { action: 'accept', content: { name: 'Ada' } } });
      expect(questions).toEqual(["MCP server 'fx' asks: Your name? (token [redacted])"]);
    } finally {
      await client.close();
    }
  },
  60_000,
);
