import { SSEClientTransport, SdkError, StreamableHTTPClientTransport, type Client, type FetchLike } from '@modelcontextprotocol/client';
import { Agent, fetch as undiciFetch } from 'undici';
import type { ConnectRequest, McpConnection, McpConnector } from '../runtime.js';
import { createBoundedFetch } from './boundedFetch.js';
import { loadCaBundle } from './caFile.js';
import { httpStatusOf } from './sdkSeam.js';
import { ProcessStdioTransport } from './stdioTransport.js';

/** Longest wait for the polite session DELETE on close. */
const TERMINATE_WAIT_MS = 1_000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** True for an HTTP 4xx answer to the first POST that says "not a Streamable HTTP endpoint" (spec back-compat rule). */
function shouldFallBackToSse(error: unknown): boolean {
  const status = httpStatusOf(error);
  return status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403;
}

async function connectStdio(request: ConnectRequest): Promise<McpConnection> {
  const { server, logger, scrub, signal, timeoutMs } = request;
  const transport = new ProcessStdioTransport({
    server: server.name,
    command: server.command!,
    args: server.args,
    env: server.env,
    ...(server.cwd === undefined ? {} : { cwd: server.cwd }),
    maxLineBytes: server.max_response_bytes,
    logger,
    scrub,
  });
  const client = request.createClient();
  try {
    await client.connect(transport, { signal, timeout: timeoutMs });
  } catch (error) {
    await transport.close().catch(() => {});
    const tail = transport.stderrTail;
    const exit = transport.exitStatus;
    if (exit !== undefined && !signal.aborted && error instanceof Error && !(error instanceof SdkError) && !error.message.startsWith('server process exited')) {
      // Same text as the transport reports for an exit, so the runtime does not repeat it.
      error.message = `server process exited (${exit})${tail.length > 0 ? `; stderr: ${tail.join(' | ')}` : ''}`;
    }
    if (tail.length > 0 && error instanceof Error && !error.message.includes('stderr:')) error.message = `${error.message}; stderr: ${tail.join(' | ')}`;
    throw error;
  }
  return {
    client,
    transport: 'stdio',
    async close() {
      await client.close().catch(() => {});
      await transport.close();
    },
  };
}

async function connectHttp(request: ConnectRequest): Promise<McpConnection> {
  const { server, logger, signal, timeoutMs } = request;
  const url = new URL(server.url!);
  let ca: string[] | undefined;
  if (server.tls_ca_cert_path !== undefined) {
    ca = await loadCaBundle(server.tls_ca_cert_path);
    if (url.protocol !== 'https:') throw new Error('tls_ca_cert_path is set, so the server URL must use https://');
  }
  const agent = new Agent(ca ? { connect: { ca } } : {});
  const base: FetchLike = async (input, init) => {
    const target = new URL(input instanceof URL ? input.href : String(input));
    if (ca && target.protocol !== 'https:') throw new Error('refused a plaintext request: tls_ca_cert_path requires https://');
    return (await undiciFetch(target, { ...(init as object), dispatcher: agent } as Parameters<typeof undiciFetch>[1])) as unknown as Response;
  };
  const fetch = createBoundedFetch({
    maxBytes: server.max_response_bytes,
    headers: server.headers,
    base,
    onOversize: (detail) => logger.warn(`mcp server '${server.name}': a ${detail}`),
  });
  const closeAgent = () => agent.destroy().catch(() => {});

  const attempt = async (kind: 'http' | 'sse'): Promise<McpConnection> => {
    const client: Client = request.createClient();
    const transport = kind === 'http' ? new StreamableHTTPClientTransport(url, { fetch }) : new SSEClientTransport(url, { fetch });
    try {
      await client.connect(transport, { signal, timeout: timeoutMs });
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
    return {
      client,
      transport: kind,
      async close() {
        if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
          await Promise.race([transport.terminateSession().catch(() => {}), delay(TERMINATE_WAIT_MS)]);
        }
        await client.close().catch(() => {});
        await closeAgent();
      },
    };
  };

  try {
    if (server.transport === 'sse') return await attempt('sse');
    try {
      return await attempt('http');
    } catch (error) {
      if (signal.aborted || !shouldFallBackToSse(error)) throw error;
      logger.info(`mcp server '${server.name}' does not speak Streamable HTTP; trying legacy SSE`);
      return await attempt('sse');
    }
  } catch (error) {
    await closeAgent();
    throw error;
  }
}

/** Opens stdio servers as owned process groups and HTTP servers with Streamable HTTP first, then legacy SSE. */
export const nodeConnector: McpConnector = (request) => (request.server.transport === 'stdio' ? connectStdio(request) : connectHttp(request));
