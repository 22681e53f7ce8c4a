import { homedir } from 'node:os';
import { waitFor } from '@capnode/toolkit';
import { SSEClientTransport, SdkError, StreamableHTTPClientTransport, SUPPORTED_PROTOCOL_VERSIONS, type Client, type FetchLike } from '@modelcontextprotocol/client';
import { Agent, fetch as undiciFetch } from 'undici';
import type { ConnectRequest, McpConnection, McpConnector } from '../types.js';
import { McpClientError } from '../errors.js';
import { createBoundedFetch } from './boundedFetch.js';
import { loadCaBundle } from './caFile.js';
import { createOAuthSession, oauthSettingsFor, type McpOAuthOptions, type OAuthSession } from './oauthSession.js';
import { httpStatusOf } from './sdkSeam.js';
import { ProcessStdioTransport } from './stdioTransport.js';

/** Cap on one OAuth metadata, registration or token response. */
const MAX_OAUTH_RESPONSE_BYTES = 1024 * 1024;

/** What the built-in connector needs beyond a {@link ConnectRequest}. */
export interface NodeConnectorOptions {
  /** OAuth for HTTP/SSE servers; without it servers authenticate with their configured `headers` only. */
  readonly oauth?: McpOAuthOptions;
}

/** Longest wait for the polite session DELETE on close. */
const TERMINATE_WAIT_MS = 1_000;


/**
 * Says what the SDK's handshake errors mean: an unsupported protocol version names the versions
 * this client speaks.
 */
function explainHandshakeError(error: unknown): void {
  if (!(error instanceof Error)) return;
  const invalid = /^(Invalid result for initialize):\s*(\[[\s\S]*\])\s*$/.exec(error.message);
  if (invalid) {
    try {
      const issues = JSON.parse(invalid[2]!) as { path?: unknown[]; message?: unknown }[];
      error.message = `${invalid[1]}: ${issues.map((issue) => `${(issue.path ?? []).join('.') || '(result)'}: ${String(issue.message)}`).join('; ')}`;
    } catch {
      // Keep the SDK's text.
    }
  }
  if (/protocol version is not supported/i.test(error.message) && !error.message.includes('supported versions:')) {
    error.message = `${error.message} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`;
  }
}

/** True for a failure the server itself answered: a JSON-RPC error, or an initialize result the SDK refused. */
function isServerAnswer(error: Error): boolean {
  return typeof (error as { code?: unknown }).code === 'number' || /protocol version is not supported|^Invalid result for initialize/i.test(error.message);
}

/**
 * Connects `client` over an HTTP or SSE `transport` within `signal`. The SDK bounds only the
 * initialize request by its timeout, not the transport's start (the legacy SSE endpoint wait has no
 * deadline), so the whole handshake is raced against the signal here; the caller closes the
 * transport on failure. A stdio transport starts at once (the spawn succeeds or fails before
 * `start()` settles), so its handshake needs only the SDK's own signal and timeout.
 */
function connectWithin(client: Client, transport: Parameters<Client['connect']>[0], signal: AbortSignal, timeoutMs: number): Promise<void> {
  return waitFor(client.connect(transport, { signal, timeout: timeoutMs }), { signal });
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
    // The user's home unless configured: a host running inside a pnpm workspace must not make `npx` resolve there.
    cwd: server.cwd ?? homedir(),
    maxLineBytes: server.maxResponseBytes,
    logger,
    scrub,
  });
  const client = request.createClient();
  try {
    await client.connect(transport, { signal, timeout: timeoutMs });
  } catch (error) {
    await client.close().catch(() => {});
    await transport.close().catch(() => {});
    const tail = transport.stderrTail;
    const exit = transport.exitStatus;
    explainHandshakeError(error);
    // The exit is the cause only of a transport failure, never of an answer the server gave (its
    // initialize error, its protocol version, its malformed result): those it exited after we closed it.
    if (exit !== undefined && !signal.aborted && error instanceof Error && !(error instanceof SdkError) && !isServerAnswer(error) && !error.message.startsWith('server process exited')) {
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

/** The OAuth session of one connection, or none when the server authenticates otherwise. */
function openOAuth(request: ConnectRequest, base: FetchLike, options: NodeConnectorOptions): { session: OAuthSession; controller: AbortController } | undefined {
  const { server } = request;
  const settings = oauthSettingsFor(server);
  if (!settings) return undefined;
  if (!options.oauth) {
    if (server.auth?.type === 'oauth') {
      throw new McpClientError('auth_failed', `MCP server '${server.name}' is configured for OAuth, but this runtime has no token directory (createMcpRuntime option oauth.dir)`);
    }
    return undefined;
  }
  const oauthFetch = createBoundedFetch({ maxBytes: MAX_OAUTH_RESPONSE_BYTES, headers: {}, base });
  // Owned by the connection: a browser wait during a later step-up must not inherit the connect deadline.
  const controller = new AbortController();
  const session = createOAuthSession(server, settings, options.oauth, { oauthFetch, signal: controller.signal });
  return { session, controller };
}

async function connectHttp(request: ConnectRequest, options: NodeConnectorOptions): Promise<McpConnection> {
  const { server, logger, signal, timeoutMs } = request;
  const url = new URL(server.url!);
  let ca: string[] | undefined;
  if (server.tlsCaCertPath !== undefined) {
    ca = await loadCaBundle(server.tlsCaCertPath);
    if (url.protocol !== 'https:') throw new Error('tls_ca_cert_path is set, so the server URL must use https://');
  }
  const agent = new Agent(ca ? { connect: { ca } } : {});
  const base: FetchLike = async (input, init) => {
    const target = new URL(input instanceof URL ? input.href : String(input));
    if (ca && target.protocol !== 'https:') throw new Error('refused a plaintext request: tls_ca_cert_path requires https://');
    return (await undiciFetch(target, { ...(init as object), dispatcher: agent } as Parameters<typeof undiciFetch>[1])) as unknown as Response;
  };
  const bounded = createBoundedFetch({
    maxBytes: server.maxResponseBytes,
    headers: server.headers,
    base,
    onOversize: (detail) => logger.warn(`mcp server '${server.name}': a ${detail}`),
  });
  let oauth: ReturnType<typeof openOAuth>;
  try {
    oauth = openOAuth(request, base, options);
  } catch (error) {
    await agent.destroy().catch(() => {});
    throw error;
  }
  const fetch = oauth ? oauth.session.wrap(bounded) : bounded;
  const stopConnectAbort = linkAbort(signal, oauth?.controller);
  const closeAgent = async () => {
    oauth?.controller.abort();
    await oauth?.session.close().catch(() => {});
    await agent.destroy().catch(() => {});
  };

  const attempt = async (kind: 'http' | 'sse'): Promise<McpConnection> => {
    const client: Client = request.createClient();
    const transport = kind === 'http' ? new StreamableHTTPClientTransport(url, { fetch }) : new SSEClientTransport(url, { fetch });
    try {
      await connectWithin(client, transport, signal, timeoutMs);
    } catch (error) {
      // Closing the client closes the transport: an SSE GET still waiting for its endpoint is aborted.
      await client.close().catch(() => {});
      await transport.close().catch(() => {});
      explainHandshakeError(error);
      throw error;
    }
    return {
      client,
      transport: kind,
      async close() {
        if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
          // Bounded by a timer that is cleared as soon as the DELETE answers: nothing outlives close().
          await waitFor(transport.terminateSession(), { timeoutMs: TERMINATE_WAIT_MS }).catch(() => {});
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
  } finally {
    stopConnectAbort();
  }
}

/** Aborts `target` when `source` aborts, until the returned function is called. */
function linkAbort(source: AbortSignal, target: AbortController | undefined): () => void {
  if (!target) return () => {};
  const onAbort = () => target.abort(source.reason);
  if (source.aborted) onAbort();
  else source.addEventListener('abort', onAbort, { once: true });
  return () => source.removeEventListener('abort', onAbort);
}

/**
 * Opens stdio servers as owned process groups and HTTP servers with Streamable HTTP first, then
 * legacy SSE; with `oauth`, HTTP/SSE servers authorize through the MCP SDK's OAuth client.
 */
export function createNodeConnector(options: NodeConnectorOptions = {}): McpConnector {
  return (request) => (request.server.transport === 'stdio' ? connectStdio(request) : connectHttp(request, options));
}
