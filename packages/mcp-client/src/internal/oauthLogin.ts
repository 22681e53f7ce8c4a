import { Client, type Implementation } from '@modelcontextprotocol/client';
import { createDeadline } from '@capnode/toolkit';
import type { McpServerConfig } from '../config.js';
import { McpClientError, isMcpClientError } from '../errors.js';
import { collectSecrets, createSecretScrubber } from '../redact.js';
import type { Logger } from '../types.js';
import { createNodeConnector } from './connect.js';
import { DEFAULT_CALLBACK_TIMEOUT_MS, oauthSettingsFor, type McpOAuthOptions } from './oauthSession.js';
import { createOAuthStore } from './oauthStore.js';

export interface LoginMcpServerOptions extends McpOAuthOptions {
  /** Opens the authorization URL (print it, open a browser); required for the authorization-code grant. */
  readonly authorize: NonNullable<McpOAuthOptions['authorize']>;
  readonly signal?: AbortSignal;
  /** Longest wait for the whole login, browser step included (default {@link DEFAULT_CALLBACK_TIMEOUT_MS}). */
  readonly timeoutMs?: number;
  readonly clientInfo?: Implementation;
  readonly logger?: Logger;
}

/** What `loginMcpServer` achieved. */
export interface LoginMcpServerResult {
  /** False when the server never asked for authorization (it works without a token). */
  readonly authorized: boolean;
  /** Where the tokens are stored (0600). */
  readonly tokenFile: string;
  readonly scope?: string;
  /** ISO time the access token expires (it is refreshed automatically while a refresh token is valid). */
  readonly expiresAt?: string;
  readonly refreshable: boolean;
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * Authorizes capnode for one HTTP/SSE server and stores its tokens: drops the stored tokens,
 * connects, and answers the server's 401 with the OAuth flow (discovery, registration, PKCE,
 * `authorize` with the URL, the redirect to a loopback listener on 127.0.0.1, token exchange).
 * Resolves once the server accepted the new token for `initialize`.
 *
 * @example
 * await loginMcpServer(server, { dir: join(home, 'oauth'), authorize: ({ url }) => console.log(`open ${url}`) });
 */
export async function loginMcpServer(server: McpServerConfig, options: LoginMcpServerOptions): Promise<LoginMcpServerResult> {
  const settings = oauthSettingsFor(server);
  if (!settings) {
    throw new McpClientError('auth_failed', `MCP server '${server.name}' does not use OAuth (it is a stdio server, has auth: { type: 'none' }, or sends a configured Authorization header)`);
  }
  const store = createOAuthStore(options.dir, server.name, server.url!);
  const before = await store.read();
  const { tokens: _dropped, ...kept } = before;
  await store.write(kept);

  const timeoutMs = options.timeoutMs ?? DEFAULT_CALLBACK_TIMEOUT_MS;
  const timeoutReason = () => new McpClientError('auth_failed', `login did not finish within ${Math.round(timeoutMs / 1000)} s`);
  const deadline = createDeadline(options.signal === undefined ? { timeoutMs, timeoutReason } : { timeoutMs, timeoutReason, signal: options.signal });
  const connector = createNodeConnector({ oauth: { ...options, callbackTimeoutMs: options.callbackTimeoutMs ?? timeoutMs } });
  const clientInfo = options.clientInfo ?? { name: 'capnode', version: '0.1.0' };
  try {
    const connection = await connector({
      server: { ...server, auth: settings },
      createClient: () => new Client(clientInfo, { capabilities: {} }),
      signal: deadline.signal,
      timeoutMs,
      logger: options.logger ?? silent,
      scrub: createSecretScrubber(collectSecrets([server])),
    });
    await connection.close();
  } catch (error) {
    if (deadline.signal.aborted && isMcpClientError(deadline.signal.reason)) throw deadline.signal.reason;
    throw error;
  } finally {
    deadline.clear();
  }
  const tokens = (await store.read()).tokens;
  return {
    authorized: tokens?.access_token !== undefined,
    tokenFile: store.path,
    refreshable: tokens?.refresh_token !== undefined,
    ...(tokens?.scope ? { scope: tokens.scope } : {}),
    ...(tokens?.expires_at === undefined ? {} : { expiresAt: new Date(tokens.expires_at).toISOString() }),
  };
}
