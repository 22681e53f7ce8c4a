import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { everythingServer } from '../support/mcpServers.js';
import { startTestHost, tempDir } from '../support/testHost.js';
import { signIn } from './apiClient.js';

interface ServerRow {
  name: string;
  enabled: boolean;
  config: Record<string, unknown>;
}

describe('dashboard MCP servers', () => {
  it('adds a server with write-only env, tests it for real, disables and removes it', async () => {
    await using test = await startTestHost();
    const client = await signIn(test.host, test.home);
    const added = await client.api('/api/servers', { method: 'POST', body: { ...everythingServer('everything'), env: { EVERYTHING_SECRET: 'shh-value' } } });
    expect(added.status).toBe(201);
    expect(((await added.json()) as { restartNeeded: string[] }).restartNeeded).toEqual([expect.stringMatching(/^mcpClient/)]);
    const listed = (await (await client.api('/api/servers')).json()) as { servers: ServerRow[] };
    expect(listed.servers.map((server) => server.name)).toEqual(['everything']);
    expect(JSON.stringify(listed)).not.toContain('shh-value');
    expect(listed.servers[0]!.config.env).toEqual({ EVERYTHING_SECRET: '••••••••' });
    expect((await client.api('/api/servers', { method: 'POST', body: everythingServer('Everything') })).status).toBe(409);
    const invalid = await client.api('/api/servers', { method: 'POST', body: { name: 'bad', command: 'x', env: { NODE_OPTIONS: '--require /tmp/x.js' } } });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { fields: { path: string }[] } }).error.fields[0]!.path).toMatch(/^mcpClient\.servers/);

    const tested = await client.api('/api/servers/everything/test', { method: 'POST' });
    expect(tested.status).toBe(200);
    const result = (await tested.json()) as { ok: boolean; diagnostic: { state: string }; tools: { name: string }[] };
    expect(result.ok).toBe(true);
    expect(result.diagnostic.state).toBe('connected');
    expect(result.tools.map((tool) => tool.name)).toContain('everything__echo');

    const perTool = await client.api('/api/servers/everything', { method: 'PATCH', body: { tools: { everything__echo: { approval: 'auto' }, everything__add: { enabled: false, approval: 'ask' } } } });
    expect(perTool.status).toBe(200);
    const policy = ((await (await client.api('/api/servers')).json()) as { toolPolicy: unknown }).toolPolicy;
    expect(policy).toEqual({ profile: 'capnode', excludedTools: ['everything__add'], autoApprove: ['everything__echo'], alwaysAsk: ['everything__add'] });
    await client.api('/api/servers/everything', { method: 'PATCH', body: { tools: { everything__add: { enabled: true, approval: 'default' } } } });
    expect(((await (await client.api('/api/servers')).json()) as { toolPolicy: unknown }).toolPolicy).toEqual({ profile: 'capnode', excludedTools: [], autoApprove: ['everything__echo'], alwaysAsk: [] });
    expect((await client.api('/api/servers/everything', { method: 'PATCH', body: { tools: { echo: { enabled: false } } } })).status).toBe(400);
    expect((await client.api('/api/servers/everything', { method: 'PATCH', body: { tools: { everything__echo: { approval: 'maybe' } } } })).status).toBe(400);
    expect((await client.api('/api/servers/everything', { method: 'PATCH', body: { enabled: false } })).status).toBe(200);
    const disabled = (await (await client.api('/api/servers')).json()) as { servers: ServerRow[] };
    expect(disabled.servers[0]!.enabled).toBe(false);
    // The env value written earlier survived the edit of another field.
    expect(test.host.settings.reload().mcpClient?.servers).toEqual([expect.objectContaining({ enabled: false, env: { EVERYTHING_SECRET: 'shh-value' } })]);
    expect((await client.api('/api/servers/everything', { method: 'DELETE' })).status).toBe(200);
    expect(((await (await client.api('/api/servers')).json()) as { servers: unknown[] }).servers).toEqual([]);
    expect((await client.api('/api/servers/everything', { method: 'DELETE' })).status).toBe(404);
    expect((await client.api('/api/servers/nope/test', { method: 'POST' })).status).toBe(404);
  });

  it('finds the client configs of this user and imports chosen servers from one', async () => {
    using home = tempDir();
    mkdirSync(join(home.path, '.cursor'));
    // Besides two servers, this capnode itself (`capnode mcp`, its default URL): left out, never imported.
    writeFileSync(
      join(home.path, '.cursor', 'mcp.json'),
      JSON.stringify({ mcpServers: { alpha: { command: 'alpha-server', env: { TOKEN: 'alpha-secret' } }, capnode: { command: 'npx', args: ['-y', 'capnode', 'mcp'] }, self: { url: 'http://localhost:8765/mcp' }, beta: { url: 'http://127.0.0.1:9/mcp' } } }),
    );
    mkdirSync(join(home.path, '.config', 'Claude'), { recursive: true });
    writeFileSync(join(home.path, '.config', 'Claude', 'claude_desktop_config.json'), '{ not json');
    await using test = await startTestHost({ host: { env: { ...process.env, HOME: home.path, XDG_CONFIG_HOME: join(home.path, '.config') } } });
    const client = await signIn(test.host, test.home);
    const found = (await (await client.api('/api/servers/discovered')).json()) as { files: { client: string; path: string; servers: { name: string; transport: string; configured: boolean }[]; error?: string }[] };
    expect(JSON.stringify(found)).not.toContain('alpha-secret');
    const cursor = found.files.find((file) => file.client === 'Cursor')!;
    expect(cursor.servers).toEqual([
      { name: 'alpha', transport: 'stdio', configured: false },
      { name: 'beta', transport: 'http', configured: false },
    ]);
    expect(found.files.find((file) => file.client === 'Claude Desktop')?.error).toMatch(/cannot read/);
    const imported = await client.api('/api/servers/import', { method: 'POST', body: { path: cursor.path, names: ['alpha'] } });
    expect(await imported.json()).toMatchObject({ imported: ['alpha'], skipped: [] });
    const again = await client.api('/api/servers/import', { method: 'POST', body: { path: cursor.path } });
    expect(await again.json()).toMatchObject({ imported: ['beta'], skipped: ['alpha'] });
    expect((test.host.settings.reload().mcpClient?.servers as { name: string }[] | undefined)?.map((server) => server.name)).toEqual(['alpha', 'beta']);
    expect((await client.api('/api/servers/import', { method: 'POST', body: { path: 'relative.json' } })).status).toBe(400);
    expect((await client.api('/api/servers/import', { method: 'POST', body: { path: '/etc/passwd' } })).status).toBe(400);
  });
});
