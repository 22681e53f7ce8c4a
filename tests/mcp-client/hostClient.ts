import type { Invoker } from '@capnode/capabilities';
import { startHttpServer } from '@capnode/mcp-server/node';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const TOKEN = 'host-token-0123456789';

/**
 * The host's HTTP server over `invoker` (where a runtime imported its servers' tools) and an SDK v2
 * client connected to it: what the host's own MCP clients see of the imported tools. Disposing closes both.
 */
export async function connectHostClient(invoker: Invoker, name: string): Promise<Client & AsyncDisposable> {
  const server = await startHttpServer({ invoker, port: 0, token: TOKEN });
  const client = new Client({ name, version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
  } catch (error) {
    await server.close();
    throw error;
  }
  return Object.assign(client, {
    async [Symbol.asyncDispose]() {
      await client.close();
      await server.close();
    },
  });
}
