import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempHome } from '../cli/helpers.js';

describe("capnode servers import of OpenAgent's client-mcps.toml", () => {
  it('adds the [[mcp]] servers with their argv, env and enabled flag', async () => {
    using dir = tempHome();
    const file = join(dir.home, 'client-mcps.toml');
    writeFileSync(file, 'version = 1\n\n[[mcp]]\nname = "project-tools"\ncommand = ["project-mcp", "stdio"]\nenv = { PROJECT_HOME = "/somewhere" }\nenabled = true\n\n[[mcp]]\nname = "off-tools"\ncommand = ["off-mcp"]\nenabled = false\n');
    const imported = await runCli(['servers', 'import', file], dir.home);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain('imported 2 MCP servers');
    const listed = await runCli(['servers', 'list', '--json'], dir.home);
    const text = listed.stdout;
    expect(text).toContain('project-tools');
    expect(text).toContain('project-mcp');
    expect(text).toContain('off-tools');
    const bad = join(dir.home, 'bad.toml');
    writeFileSync(bad, 'version = 2\n[[mcp]]\nname = "x"\ncommand = "x"\n');
    const refused = await runCli(['servers', 'import', bad], dir.home);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('mcp[0].command');
  });
});
