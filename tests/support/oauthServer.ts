// A real OAuth 2.1 authorization server and a protected MCP server on one loopback port, built from
// the MCP SDK v1's server-side auth (`mcpAuthRouter`: metadata, dynamic client registration,
// /authorize with PKCE, /token with client authentication and PKCE verification, bearer middleware
// with RFC 9728 protected-resource metadata) and its `McpServer` over Streamable HTTP. Only the
// grant bookkeeping (`OAuthServerProvider`) is ours: it approves every authorization at once (the
// "user" always consents), so a test's browser step is a fetch of the authorization URL.
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

const sdkRequire = createRequire(createRequire(import.meta.url).resolve('@modelcontextprotocol/sdk/package.json'));
// express is the SDK v1's own dependency (its auth router is an express router).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const express = sdkRequire('express') as any;

interface Grant {
  clientId: string;
  scopes: string[];
  expiresAt: number;
  resource?: string;
}

export interface OAuthFixtureOptions {
  /** Access-token lifetime in seconds (default 3600). */
  readonly accessTokenSecs?: number;
  /** Scopes the MCP endpoint requires (default none). */
  readonly requiredScopes?: readonly string[];
  readonly scopesSupported?: readonly string[];
}

export interface OAuthFixture {
  /** The protected MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly mcpUrl: string;
  /** The same tools over the legacy HTTP+SSE transport, `http://127.0.0.1:<port>/sse`, behind the same bearer check. */
  readonly sseUrl: string;
  readonly issuer: string;
  /** What the server saw, for assertions. */
  readonly stats: { registrations: number; authorizations: number; codeExchanges: number; refreshes: number; mcpRequests: number; bearerRequests: number };
  /** The `authorization` header of every MCP request, in order. */
  readonly mcpAuthorization: (string | undefined)[];
  /** Ends every access token at once (server-side expiry); refresh tokens stay valid. */
  expireAccessTokens(): void;
  /** Ends every refresh token too: only a new authorization helps. */
  revokeAll(): void;
  close(): Promise<void>;
}

/**
 * The scripted browser step: fetches the authorization URL (the server approves and redirects),
 * then follows the redirect to the client's loopback listener.
 */
export async function approveInBrowser(url: URL | string): Promise<void> {
  const approval = await fetch(url, { redirect: 'manual' });
  const location = approval.headers.get('location');
  await approval.body?.cancel();
  if (!location) throw new Error(`the authorization endpoint answered ${approval.status} without a redirect`);
  const callback = await fetch(location);
  await callback.text();
  if (!callback.ok) throw new Error(`the loopback listener answered ${callback.status}`);
}

/** Starts the authorization server + protected MCP server on 127.0.0.1 (a free port). */
export async function startOAuthFixture(options: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
  const { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } = await import('@modelcontextprotocol/sdk/server/auth/router.js');
  const { requireBearerAuth } = await import('@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js');
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const { SSEServerTransport } = await import('@modelcontextprotocol/sdk/server/sse.js');

  const lifetime = options.accessTokenSecs ?? 3600;
  const stats = { registrations: 0, authorizations: 0, codeExchanges: 0, refreshes: 0, mcpRequests: 0, bearerRequests: 0 };
  const mcpAuthorization: (string | undefined)[] = [];
  const clients = new Map<string, { client_id: string; redirect_uris: string[] } & Record<string, unknown>>();
  const codes = new Map<string, { clientId: string; challenge: string; redirectUri: string; scopes: string[]; resource?: string }>();
  const access = new Map<string, Grant>();
  const refresh = new Map<string, Grant>();

  const issue = (grant: Omit<Grant, 'expiresAt'>) => {
    const token = `at-${randomUUID()}`;
    const refreshToken = `rt-${randomUUID()}`;
    access.set(token, { ...grant, expiresAt: Date.now() + lifetime * 1000 });
    refresh.set(refreshToken, { ...grant, expiresAt: Number.POSITIVE_INFINITY });
    return { access_token: token, token_type: 'bearer', expires_in: lifetime, refresh_token: refreshToken, ...(grant.scopes.length ? { scope: grant.scopes.join(' ') } : {}) };
  };

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const provider: any = {
    clientsStore: {
      getClient: async (id: string) => clients.get(id),
      registerClient: async (client: { client_id: string; redirect_uris: string[] }) => {
        stats.registrations += 1;
        clients.set(client.client_id, client);
        return client;
      },
    },
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    async authorize(client: { client_id: string; redirect_uris: string[] }, params: any, res: any) {
      stats.authorizations += 1;
      if (!client.redirect_uris.includes(params.redirectUri)) throw new Error('unregistered redirect_uri');
      const code = randomUUID();
      codes.set(code, { clientId: client.client_id, challenge: params.codeChallenge, redirectUri: params.redirectUri, scopes: params.scopes ?? [], resource: params.resource?.href });
      const target = new URL(params.redirectUri);
      target.searchParams.set('code', code);
      if (params.state !== undefined) target.searchParams.set('state', params.state);
      res.redirect(target.href);
    },
    async challengeForAuthorizationCode(_client: unknown, code: string) {
      const entry = codes.get(code);
      if (!entry) throw new Error('invalid authorization code');
      return entry.challenge;
    },
    async exchangeAuthorizationCode(client: { client_id: string }, code: string, _verifier?: string, redirectUri?: string) {
      const entry = codes.get(code);
      if (!entry || entry.clientId !== client.client_id) throw new Error('invalid authorization code');
      if (redirectUri !== undefined && redirectUri !== entry.redirectUri) throw new Error('redirect_uri mismatch');
      codes.delete(code);
      stats.codeExchanges += 1;
      return issue({ clientId: client.client_id, scopes: entry.scopes, ...(entry.resource ? { resource: entry.resource } : {}) });
    },
    async exchangeRefreshToken(client: { client_id: string }, token: string) {
      const grant = refresh.get(token);
      const { InvalidGrantError } = await import('@modelcontextprotocol/sdk/server/auth/errors.js');
      if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError('refresh token is not valid');
      refresh.delete(token);
      stats.refreshes += 1;
      return issue({ clientId: grant.clientId, scopes: grant.scopes, ...(grant.resource ? { resource: grant.resource } : {}) });
    },
    async verifyAccessToken(token: string) {
      const grant = access.get(token);
      const { InvalidTokenError } = await import('@modelcontextprotocol/sdk/server/auth/errors.js');
      if (!grant || grant.expiresAt < Date.now()) throw new InvalidTokenError('token expired or unknown');
      return { token, clientId: grant.clientId, scopes: grant.scopes, expiresAt: Math.floor(grant.expiresAt / 1000), ...(grant.resource ? { resource: new URL(grant.resource) } : {}) };
    },
  };

  const app = express();
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const mcpUrl = `${base}/mcp`;
  const noLimit = { rateLimit: false } as const;
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: new URL(base),
      resourceServerUrl: new URL(mcpUrl),
      ...(options.scopesSupported ? { scopesSupported: [...options.scopesSupported] } : {}),
      authorizationOptions: noLimit,
      tokenOptions: noLimit,
      clientRegistrationOptions: noLimit,
      revocationOptions: noLimit,
    }),
  );
  const bearer = requireBearerAuth({
    verifier: provider,
    requiredScopes: [...(options.requiredScopes ?? [])],
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(mcpUrl)),
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const createMcp = (req: any) => {
    const mcp = new McpServer({ name: 'oauth-fixture', version: '1.0.0' });
    mcp.registerTool('whoami', { description: 'The caller as the authorization server knows it', inputSchema: { note: z.string().optional() } }, async () => ({
      content: [{ type: 'text', text: `client ${req.auth.clientId}; scopes ${req.auth.scopes.join(' ') || '(none)'}` }],
    }));
    return mcp;
  };
  // Legacy HTTP+SSE: its own protected-resource metadata (the resource is the /sse URL).
  const sseUrl = `${base}/sse`;
  const sseMetadata = `${base}/.well-known/oauth-protected-resource/sse`;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  app.get('/.well-known/oauth-protected-resource/sse', (_req: any, res: any) => res.json({ resource: sseUrl, authorization_servers: [new URL(base).href] }));
  const sseBearer = requireBearerAuth({ verifier: provider, requiredScopes: [...(options.requiredScopes ?? [])], resourceMetadataUrl: sseMetadata });
  const sseSessions = new Map<string, InstanceType<typeof SSEServerTransport>>();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const count = (req: any, _res: any, next: any) => {
    stats.mcpRequests += 1;
    mcpAuthorization.push(req.headers.authorization);
    if (req.headers.authorization) stats.bearerRequests += 1;
    next();
  };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  app.get('/sse', count, sseBearer, async (req: any, res: any) => {
    const transport = new SSEServerTransport('/messages', res);
    sseSessions.set(transport.sessionId, transport);
    res.on('close', () => sseSessions.delete(transport.sessionId));
    await createMcp(req).connect(transport);
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  app.post('/messages', count, sseBearer, express.json(), async (req: any, res: any) => {
    const transport = sseSessions.get(String(req.query.sessionId));
    if (!transport) return res.status(404).end();
    await transport.handlePostMessage(req, res, req.body);
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  app.post('/mcp', express.json(), (req: any, _res: any, next: any) => {
    stats.mcpRequests += 1;
    mcpAuthorization.push(req.headers.authorization);
    if (req.headers.authorization) stats.bearerRequests += 1;
    next();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
  }, bearer, async (req: any, res: any) => {
    const mcp = createMcp(req);
    // Stateless: no session id (the SDK v1 option type does not admit the documented `undefined` under exactOptionalPropertyTypes).
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined } as unknown as ConstructorParameters<typeof StreamableHTTPServerTransport>[0]);
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  app.all('/mcp', (_req: any, res: any) => res.status(405).set('allow', 'POST').end());

  return {
    mcpUrl,
    sseUrl,
    issuer: base,
    stats,
    mcpAuthorization,
    expireAccessTokens: () => access.clear(),
    revokeAll: () => {
      access.clear();
      refresh.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const transport of sseSessions.values()) void transport.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
