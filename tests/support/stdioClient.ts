import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/**
 * A stdio transport to `node <bin> mcp` on config dir `home` (extra `env` over the test's own), with the
 * child's stderr collected for assertion messages.
 * @param args extra arguments after `mcp` (such as `--tool-names underscore`).
 */
export function capnodeStdioTransport(bin: string, home: string, env: Record<string, string> = {}, args: readonly string[] = []): { transport: StdioClientTransport; stderr: () => string } {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', ...args],
    env: { ...(process.env as Record<string, string>), CAPNODE_HOME: home, ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { transport, stderr: () => stderr };
}
