import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Entry script of `@modelcontextprotocol/server-everything` (a devDependency of the CLI and the host), run with `node`. */
export const everythingScript = join(
  dirname(createRequire(new URL('../../apps/cli/package.json', import.meta.url)).resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);

/** A stdio server entry running server-everything. */
export function everythingServer(name = 'everything'): Record<string, unknown> & { name: string } {
  return { name, command: process.execPath, args: [everythingScript, 'stdio'] };
}

/** A stdio server entry that writes its pid to `pidFile` and never answers. */
export function hangingServer(name: string, pidFile: string, connectTimeoutSecs: number): Record<string, unknown> & { name: string } {
  return {
    name,
    command: process.execPath,
    args: ['-e', 'require("node:fs").writeFileSync(process.env.PID_FILE, String(process.pid)); setInterval(() => {}, 1000);'],
    env: { PID_FILE: pidFile },
    connect_timeout_secs: connectTimeoutSecs,
  };
}
