import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { expect, it } from 'vitest';
import { capnodeStdioTransport } from '../support/stdioClient.js';
import { nextPending, startTestHost } from '../approvals/helpers.js';

const trayBin = realpathSync(resolve(fileURLToPath(new URL('../../apps/tray/dist/bin.js', import.meta.url))));

it("capnode-tray mcp attaches to the running host: a stdio client's call is in that host's pending list, and audited as mcp-stdio", async () => {
  await using test = await startTestHost({ settings: { approvals: { wait: 'block', notify: false } } });
  const { transport, stderr } = capnodeStdioTransport(trayBin, test.home);
  const client = new Client({ name: 'claude-desktop-via-tray', version: '1.0.0' });
  await client.connect(transport);
  try {
    const status = (await client.callTool({ name: 'app.status', arguments: {} })) as { structuredContent?: Record<string, unknown> };
    // The running host answers (its HTTP listener), not a stdio host of the tray's own.
    expect(status.structuredContent).toMatchObject({ mcp: { state: 'listening' }, stdio: { state: 'stopped' } });
    expect(stderr()).toContain('relaying to the running host');
    const call = client.callTool({ name: 'system.run', arguments: { command: [process.execPath, '-e', 'console.log(6*7)'] } });
    const pending = await nextPending(test);
    expect(pending.caller).toBe('claude-desktop-via-tray');
    expect(pending.transport).toBe('mcp-stdio');
    expect(await test.answer(pending, 'allow-once')).toBe(200);
    const result = (await call) as { isError?: boolean; structuredContent?: Record<string, unknown> };
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toMatchObject({ stdout: '42\n' });
  } finally {
    await client.close();
  }
}, 60_000);
