// Imported-tool target: a real capnode host (`createHost`, the production HTTP stack with token, gates,
// exec approvals and audit) serving the built-in `bench.echo` and, re-exported from an MCP server it
// imports over stdio (the SDK v2 reference server, bench/fixtures/stdioSdk.mjs), `ref__bench.echo`.
// The process is tuned as `capnode serve` tunes its own. Prints `READY {"url","token","imported"}`.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHost } from '@capnode/host';
import { limitYoungGenerationGrowth } from '@capnode/mcp-server/node';
import { benchCapability } from '../fixtures/echo.mjs';

const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..');
if (process.env.CAPNODE_BENCH_UNTUNED !== '1') limitYoungGenerationGrowth();
const home = mkdtempSync(join(tmpdir(), 'capnode-bench-host-'));
writeFileSync(
  join(home, 'settings.json'),
  JSON.stringify({
    mcpClient: {
      reexport: true,
      servers: [{ name: 'ref', command: process.execPath, args: [join(benchDir, 'fixtures/stdioSdk.mjs')] }],
      risk_profiles: { capnode: { autonomy: 'full' } },
    },
  }),
  { mode: 0o600 },
);
const host = createHost({ home, port: 0, builtins: false, capabilities: [benchCapability], onLog: (level, message) => level === 'error' && console.error(message) });
const status = await host.start();
await host.importsReady();
const imported = host.registry.commands().map((command) => command.name).find((name) => name.startsWith('ref__'));
if (!imported) throw new Error(`the imported server listed no tool: ${JSON.stringify(host.status().mcpClient)}`);
const token = readFileSync(host.paths.mcpToken, 'utf8').trim();
console.log(`READY ${JSON.stringify({ url: status.mcp.url, token, imported })}`);
let closing = false;
const stop = async () => {
  if (closing) return;
  closing = true;
  await host.close();
  rmSync(home, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop).resume();
