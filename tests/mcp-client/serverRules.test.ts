import { homedir } from 'node:os';
import { isMcpClientError, parseMcpConfig, validateMcpConfig } from '@capnode/mcp-client';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { describe, expect, test } from 'vitest';
import { fixtureServer, grantAll, memoryLogger, textOf } from './helpers.js';
import { tempDir } from '../support/testHost.js';

describe('server names', () => {
  test.each(['a__b', '__lead', 'trail__', 'x___y'])("'%s' is refused: '__' separates server and tool", (name) => {
    const result = validateMcpConfig({ servers: [{ name, command: 'node' }] });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.issues).toEqual([{ path: 'servers[0].name', message: "must not contain '__' (it separates server and tool in <server>__<tool>); use '-' or a single '_'" }]);
    let thrown: unknown;
    try {
      parseMcpConfig({ servers: [{ name, command: 'node' }] });
    } catch (error) {
      thrown = error;
    }
    expect(isMcpClientError(thrown) && thrown.code).toBe('invalid_config');
  });

  test("single '_' and '-' stay allowed", () => {
    expect(validateMcpConfig({ servers: [{ name: 'my_server', command: 'node' }, { name: 'my-server-2', command: 'node' }] }).ok).toBe(true);
  });
});

describe('grants never fail silently', () => {
  test('servers configured but granted to no agent give a warning (config validation and the runtime)', async () => {
    const raw = {
      servers: [fixtureServer('granted'), fixtureServer('orphan'), fixtureServer('excluded')],
      bundles: { main: { servers: ['granted', 'excluded'], exclude: ['excluded'] } },
      agents: { test: { mcp_bundles: ['main'] }, idle: {} },
    };
    const { config, warnings } = parseMcpConfig(raw);
    expect(warnings.map((w) => `${w.path}: ${w.message}`)).toEqual([
      "servers[1]: 'orphan' is granted to no agent (no agent's mcp_bundles includes it); it is never connected",
      "servers[2]: 'excluded' is granted to no agent (no agent's mcp_bundles includes it); it is never connected",
    ]);
    await using idle = await createMcpRuntime(config, { agent: 'idle', logger: memoryLogger() });
    expect(idle.diagnostics()).toEqual([]);
    expect(idle.warnings).toContain("3 MCP server(s) configured, but agent 'idle' is granted none (add them to a bundle in its mcp_bundles)");
  });

  test('without agents (a host that connects every enabled server) there is no such warning', () => {
    expect(parseMcpConfig({ servers: [fixtureServer('one')] }).warnings).toEqual([]);
  });
});

describe('stdio working directory', () => {
  test("a stdio server starts in the user's home directory unless cwd says otherwise", async () => {
    using dir = tempDir();
    await using runtime = await createMcpRuntime(grantAll([fixtureServer('home'), fixtureServer('here', 'ok', { cwd: dir.path })]), { agent: 'test', logger: memoryLogger() });
    expect(textOf(await runtime.call('home__cwd'))).toBe(homedir());
    expect(textOf(await runtime.call('here__cwd'))).toBe(dir.path);
  });
});
