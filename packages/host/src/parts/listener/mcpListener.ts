import { isInsecureTokenFileError, loadOrCreateToken, startHttpServer, type McpHttpServer } from '@capnode/mcp-server/node';
import { HOST_MARKER_CAPABILITY } from '@capnode/mcp-client';
import { HostError, isHostError } from '../../errors.js';
import type { HostPaths } from '../../config/paths.js';
import { readAcceptedTokens, type AcceptedToken, type TokenUsageRecorder } from '../../config/clientTokens.js';
import type { HostContext } from '../../context/hostContext.js';
import type { McpListenerState } from '../../status/hostStatus.js';

/** Opens a loopback HTTP listener serving MCP (bearer `token`, or the named client tokens) and the admin routes (bearer `adminToken`). */
export type ListenFn = (port: number, address: string, token: string | readonly AcceptedToken[], adminToken: string) => Promise<McpHttpServer>;

/** What a client with a missing or stale token is told: where the current one is and how to put it in a client's config. */
const UNAUTHORIZED_TEXT =
  'Unauthorized: send capnode\'s current MCP token as `Authorization: Bearer <token>`. Print it with `capnode token show`, or rewrite your client\'s config with `capnode config <client> --write`.';

/** The one way this host opens an HTTP listener (the MCP listener and the admin-only ones alike), serving the admin routes of `adminHandler`. */
export function createListen(context: HostContext, adminHandler: (request: Request) => Promise<Response>, tokenUse: TokenUsageRecorder): ListenFn {
  const serverInfo = { name: 'capnode', version: context.version };
  const recordUse = (name: string) => tokenUse.record(name);
  return (port, address, token, adminToken) =>
    startHttpServer({
      // Named client tokens: record when each was last used (`capnode token list`).
      ...(typeof token === 'string' ? {} : { onTokenUsed: recordUse }),
      invoker: context.pipeline.invoker,
      host: address,
      port,
      token,
      unauthorizedText: UNAUTHORIZED_TEXT,
      maxConcurrency: context.settings.get().mcp.maxConcurrency,
      toolNames: context.settings.get().mcp.toolNames,
      serverInfo,
      experimentalCapabilities: { [HOST_MARKER_CAPABILITY]: { instance: context.hostId } },
      admin: { token: adminToken, handle: adminHandler },
      onLog: (level, message) => context.logging.log(level === 'info' ? 'debug' : level, `mcp ${message}`),
    });
}

export function describeListenError(error: unknown, host: string, port: number): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'EADDRINUSE') return `port ${port} on ${host} is already in use — is another capnode host running (capnode status)? Stop it, or pick another port: capnode serve --port ${port + 1}`;
  if (code === 'EACCES') return `not allowed to listen on ${host}:${port} — pick a port above 1024: capnode serve --port 8765`;
  if (code === 'EADDRNOTAVAIL') return `cannot bind ${host}: the address is not available on this machine — use 127.0.0.1`;
  return `the MCP listener could not start on ${host}:${port}: ${(error as Error)?.message ?? String(error)}`;
}

/**
 * The MCP client tokens (`default` from `mcp-token`, created when missing, and the named ones) and
 * the admin bearer token; a refused entry of `mcp-tokens.json` goes to `onWarning`; a HostError `insecure_file` or `io` says why not.
 */
export async function loadListenerTokens(paths: HostPaths, onWarning: (message: string) => void): Promise<{ tokens: AcceptedToken[]; adminToken: string }> {
  try {
    await loadOrCreateToken(paths.mcpToken);
    const adminToken = (await loadOrCreateToken(paths.adminToken)).token;
    return { tokens: readAcceptedTokens(paths, { onWarning }), adminToken };
  } catch (error) {
    if (isInsecureTokenFileError(error)) throw new HostError('insecure_file', error.message, { cause: error });
    if (isHostError(error)) throw error;
    throw new HostError('io', `cannot read or create the token files in ${paths.home}: ${(error as Error).message}`, { cause: error });
  }
}

export interface McpListenerOptions {
  /** Its signal says the host closed: a listener that opens after close is closed again. */
  readonly context: HostContext;
  /** This run's address and port instead of `settings.mcp`'s. */
  readonly host?: string;
  readonly port?: number;
  readonly listen: ListenFn;
}

/** The MCP HTTP listener's lifecycle and the state `status().mcp` reports. */
export interface McpListener {
  readonly state: McpListenerState;
  /** Why the listener is not running, after a failed start. */
  readonly error: string | undefined;
  readonly server: McpHttpServer | undefined;
  /**
   * Loads the tokens and listens. @throws HostError `insecure_file`/`io` (tokens), `listen_failed`,
   * `closed` (the host closed meanwhile; the listener is closed again).
   */
  start(): Promise<McpHttpServer>;
  /** `mcp.enabled` is false: state `disabled`. */
  disable(): void;
  /** Stops serving at once (state `disabled`) and hands back the server for the caller to close. */
  detach(): McpHttpServer | undefined;
  /** Closes a running listener (draining in-flight requests); `true` when one ran. */
  close(): Promise<boolean>;
}

export function createMcpListener(options: McpListenerOptions): McpListener {
  const { settings, paths, signal } = options.context;
  const { knownSecrets, fileLog } = options.context.logging;
  let state: McpListenerState = settings.get().mcp.enabled ? 'stopped' : 'disabled';
  let startError: string | undefined;
  let server: McpHttpServer | undefined;

  async function start(): Promise<McpHttpServer> {
    const mcp = settings.get().mcp;
    const address = options.host ?? mcp.host;
    const port = options.port ?? mcp.port;
    state = 'starting';
    startError = undefined;
    let tokens: AcceptedToken[];
    let adminToken: string;
    try {
      ({ tokens, adminToken } = await loadListenerTokens(paths, (message) => options.context.logging.log('warning', message)));
      for (const entry of tokens) knownSecrets.add(entry.token);
      knownSecrets.add(adminToken);
    } catch (error) {
      state = 'error';
      startError = (error as HostError).message;
      throw error;
    }
    let running: McpHttpServer;
    try {
      running = await options.listen(port, address, tokens, adminToken);
    } catch (error) {
      state = 'error';
      startError = describeListenError(error, address, port);
      fileLog('error', `MCP listener failed to start: ${startError}`);
      throw new HostError('listen_failed', startError, { cause: error });
    }
    server = running;
    if (signal.aborted) {
      await running.close();
      server = undefined;
      state = 'stopped';
      throw new HostError('closed', 'the host was closed while starting');
    }
    state = 'listening';
    return running;
  }

  return {
    get state() {
      return state;
    },
    get error() {
      return startError;
    },
    get server() {
      return server;
    },
    start,
    disable() {
      state = 'disabled';
    },
    detach() {
      const running = server;
      server = undefined;
      state = 'disabled';
      return running;
    },
    async close() {
      if (!server) return false;
      const running = server;
      server = undefined;
      await running.close();
      if (state === 'listening') state = 'stopped';
      return true;
    },
  };
}
