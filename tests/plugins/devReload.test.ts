import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { startServe, tempHome } from '../cli/helpers.js';
import { eventually } from '../support/poll.js';

const version = (n: number, extra = '') => `import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
export default (context) => {
  context.signal.addEventListener('abort', () => appendFileSync(join(context.dataDir, 'unloaded.txt'), 'v${n}\\n'));
  return {
  category: 'dev',
  commands: [
    { name: 'dev.version', description: 'Which version of the file is loaded.', execute: () => ({ ok: true, content: [{ type: 'text', text: 'v${n}' }] }) },${extra}
  ],
  };
};
`;

describe('capnode serve --dev-plugin', () => {
  it('reloads the plugin when its file changes: a real MCP client sees list_changed and the new behaviour', async () => {
    using temp = tempHome();
    const file = join(temp.home, 'devPlugin.mjs');
    writeFileSync(file, version(1));
    await using serve = await startServe(temp.home, ['--port', '0', '--dev-plugin', file]);
    expect(serve.stdout()).toContain(`dev plugin:     devPlugin (${file})`);
    let changes = 0;
    const client = new Client({ name: 'dev-reload', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' }, listChanged: { tools: { onChanged: () => void (changes += 1) } } });
    const token = readFileSync(join(temp.home, 'mcp-token'), 'utf8').trim();
    await client.connect(new StreamableHTTPClientTransport(new URL(serve.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    try {
      const text = async (name: string) => ((await client.callTool({ name, arguments: {} })).content as { text: string }[])[0]!.text;
      expect(await text('dev.version')).toBe('v1');
      // The client opens its notification stream in the background; rewrite until a change is seen.
      let n = 1;
      await eventually(
        async () => {
          n += 1;
          writeFileSync(file, version(n, `\n    { name: 'dev.added', description: 'New in this version.', execute: () => 'added ${n}' },`));
          await new Promise((resolve) => setTimeout(resolve, 800));
          return changes > 0;
        },
        { what: 'tools/list_changed after the file changed', timeoutMs: 20_000 },
      );
      await eventually(async () => (await client.listTools()).tools.some((tool) => tool.name === 'dev.added'), { what: 'dev.added listed' });
      expect(await text('dev.version')).toBe(`v${n}`);
      expect(await text('dev.added')).toBe(`added ${n}`);
      // Each unload aborted the old version's signal (in its data directory).
      expect(readFileSync(join(temp.home, 'plugins-data', 'devPlugin', 'unloaded.txt'), 'utf8')).toContain('v1\n');

      // A broken save is a diagnostic; the next good one loads again.
      writeFileSync(file, 'export default {{ nope');
      await serve.waitForStderr(/dev plugin devPlugin reloaded: failed/);
      expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('dev.version');
      writeFileSync(file, version(99));
      await eventually(async () => (await client.listTools()).tools.some((tool) => tool.name === 'dev.version'), { what: 'dev.version back' });
      expect(await text('dev.version')).toBe('v99');
    } finally {
      await client.close();
    }
    expect(await serve.stop()).toBe(0);
  }, 60_000);
});
