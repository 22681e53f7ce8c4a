import { auth, computeScopeUnion, extractWWWAuthenticateParams, isStrictScopeSuperset, type FetchLike } from '@modelcontextprotocol/client';
import type { McpServerAuth, McpServerConfig } from '../config.js';
import { isMcpClientError, McpClientError } from '../errors.js';
import { startOAuthCallbackListener, type OAuthCallback, type OAuthCallbackListener } from './oauthCallback.js';
import { authRequired, StoreOAuthProvider } from './oauthProvider.js';
import { createOAuthStore } from './oauthStore.js';

/** What a browser step gets: open `url`; the loopback listener receives the redirect. */
export interface McpAuthorizationRequest {
  readonly server: string;
  readonly url: URL;
  readonly signal: AbortSignal;
}

/** OAuth for HTTP/SSE servers: where tokens live and, when a user agent is at hand, how to open it. */
export interface McpOAuthOptions {
  /** Directory of the token files (`<dir>/<server>.json`, 0600), e.g. `<config dir>/oauth`. */
  readonly dir: string;
  /**
   * Opens the authorization URL (a browser, or a scripted user agent in tests). Without it the
   * runtime is non-interactive: a server without a valid or refreshable token fails with
   * `auth_required`, naming `capnode servers login <name>`.
   */
  readonly authorize?: (request: McpAuthorizationRequest) => Promise<void> | void;
  /** Longest wait for the redirect after the URL was opened (default 5 minutes). */
  readonly callbackTimeoutMs?: number;
  /** How the client names itself when it registers (default `capnode`). */
  readonly clientName?: string;
}

/** Default wait for the browser step. */
export const DEFAULT_CALLBACK_TIMEOUT_MS = 300_000;
/** Tokens this close to expiry are refreshed before use. */
const EXPIRY_SKEW_MS = 30_000;
/** Browser steps per connection: bounds step-up loops against a server that never accepts (MCP "scope challenge handling"). */
const MAX_INTERACTIVE_AUTHORIZATIONS = 3;

type OAuthSettings = Extract<McpServerAuth, { type: 'oauth' }>;

interface Challenge {
  readonly kind: 'unauthorized' | 'insufficient_scope';
  readonly scope?: string;
  readonly resourceMetadataUrl?: URL;
}

/** The OAuth state of one connection: wraps the transport's fetch, runs the SDK's `auth()` when a server asks. */
export interface OAuthSession {
  readonly provider: StoreOAuthProvider;
  /** The transport fetch: bearer on every request to the server, 401 / 403 `insufficient_scope` answered and replayed once. */
  wrap(next: FetchLike): FetchLike;
  /** Runs an authorization now (`servers login`): refresh or browser step as needed. */
  authorize(options?: { readonly force?: boolean }): Promise<void>;
  close(): Promise<void>;
}

/** The OAuth settings in effect for a server, or `undefined` when it authenticates otherwise (static `Authorization`, `auth: none`, stdio). */
export function oauthSettingsFor(server: McpServerConfig): OAuthSettings | undefined {
  if (server.transport === 'stdio' || server.url === undefined) return undefined;
  if (server.auth?.type === 'none') return undefined;
  if (server.auth?.type === 'oauth') return server.auth;
  if (Object.keys(server.headers).some((name) => name.toLowerCase() === 'authorization')) return undefined;
  return { type: 'oauth', grant: 'authorization_code', scopes: [] };
}

function readChallenge(response: Response): Challenge | undefined {
  if (response.status !== 401 && response.status !== 403) return undefined;
  const params = extractWWWAuthenticateParams(response);
  if (response.status === 403 && params.error !== 'insufficient_scope') return undefined;
  return {
    kind: response.status === 401 ? 'unauthorized' : 'insufficient_scope',
    ...(params.scope ? { scope: params.scope } : {}),
    ...(params.resourceMetadataUrl ? { resourceMetadataUrl: params.resourceMetadataUrl } : {}),
  };
}

function withBearer(init: RequestInit | undefined, token: string | undefined): RequestInit | undefined {
  if (token === undefined) return init;
  const headers = new Headers(init?.headers);
  headers.set('authorization', `Bearer ${token}`);
  return { ...init, headers };
}

function usableToken(provider: StoreOAuthProvider): string | undefined {
  const tokens = provider.record.tokens;
  if (!tokens?.access_token) return undefined;
  if (tokens.expires_at !== undefined) {
    // A quarter of a short lifetime, at most EXPIRY_SKEW_MS: a 5-second token is still used when fresh.
    const lifetime = typeof tokens.expires_in === 'number' && tokens.expires_in > 0 ? tokens.expires_in * 1000 : EXPIRY_SKEW_MS * 4;
    if (tokens.expires_at - Math.min(EXPIRY_SKEW_MS, lifetime / 4) <= Date.now()) return undefined;
  }
  return tokens.access_token;
}

function failure(server: string, error: unknown): McpClientError {
  if (isMcpClientError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new McpClientError('auth_failed', `OAuth authorization for MCP server '${server}' failed: ${message.slice(0, 300)}`, { cause: error });
}

/**
 * Creates the OAuth session of one server connection. `oauthFetch` carries the OAuth requests
 * (discovery, registration, token) without MCP headers or bearer; `signal` ends a browser wait.
 */
export function createOAuthSession(
  server: McpServerConfig,
  settings: OAuthSettings,
  options: McpOAuthOptions,
  context: { readonly oauthFetch: FetchLike; readonly signal: AbortSignal },
): OAuthSession {
  const name = server.name;
  const serverUrl = new URL(server.url!);
  const store = createOAuthStore(options.dir, name, server.url!);
  let listener: OAuthCallbackListener | undefined;
  let interactiveRuns = 0;
  let requestedScope: string | undefined = settings.scopes.length > 0 ? settings.scopes.join(' ') : undefined;
  let inflight: Promise<void> | undefined;
  let loaded: Promise<unknown> | undefined;
  let closed = false;
  const authorizeHook = options.authorize;
  /** The redirect expected for the authorization URL just handed out; waited on before the user agent opens it. */
  let callback: Promise<OAuthCallback> | undefined;
  const onRedirect = async (url: URL) => {
    const state = provider.lastState;
    if (!listener || state === undefined || !authorizeHook) throw authRequired(name);
    callback = listener.waitFor(state, { signal: context.signal, timeoutMs: options.callbackTimeoutMs ?? DEFAULT_CALLBACK_TIMEOUT_MS });
    callback.catch(() => {});
    await authorizeHook({ server: name, url, signal: context.signal });
  };
  const provider = new StoreOAuthProvider({
    server: name,
    settings,
    store,
    clientName: options.clientName ?? 'capnode',
    ...(authorizeHook ? { onRedirect } : {}),
  });
  const sdkOptions = { serverUrl, fetchFn: context.oauthFetch };

  async function run(challenge: Challenge | undefined, force: boolean): Promise<void> {
    await provider.load();
    const tokens = provider.record.tokens;
    const stepUp = challenge?.kind === 'insufficient_scope';
    const scope = stepUp ? computeScopeUnion(requestedScope, tokens?.scope, challenge.scope) : (challenge?.scope ?? requestedScope);
    const forceReauthorization = force || (stepUp && isStrictScopeSuperset(scope, tokens?.scope));
    if (!provider.interactive && settings.grant === 'authorization_code' && (!tokens?.refresh_token || forceReauthorization)) {
      throw authRequired(name, stepUp ? `it asks for more OAuth scope (${scope ?? 'unspecified'}) than the stored token has` : undefined);
    }
    if (provider.interactive && settings.grant === 'authorization_code') {
      if (interactiveRuns >= MAX_INTERACTIVE_AUTHORIZATIONS) throw new McpClientError('auth_failed', `MCP server '${name}' still refuses access after ${MAX_INTERACTIVE_AUTHORIZATIONS} authorizations`);
      listener ??= await startOAuthCallbackListener(settings.redirectPort ?? 0);
      provider.setRedirectUrl(listener.redirectUrl);
    }
    if (scope !== undefined) requestedScope = scope;
    const resource = challenge?.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {};
    const first = await auth(provider, { ...sdkOptions, ...resource, ...(scope ? { scope } : {}), forceReauthorization });
    if (first === 'AUTHORIZED') return;
    // REDIRECT: the provider handed the URL to the user agent; the code arrives on the loopback listener.
    interactiveRuns += 1;
    const pending = callback;
    callback = undefined;
    if (!pending) throw authRequired(name);
    const answer = await pending;
    const second = await auth(provider, { ...sdkOptions, ...resource, ...(scope ? { scope } : {}), authorizationCode: answer.code, ...(answer.iss ? { iss: answer.iss } : {}) });
    if (second !== 'AUTHORIZED') throw new McpClientError('auth_failed', `MCP server '${name}': the authorization code was not accepted`);
  }

  /** One authorization at a time per connection; concurrent 401s share it. */
  function authorize(challenge: Challenge | undefined, force = false): Promise<void> {
    if (closed) return Promise.reject(new McpClientError('auth_failed', `MCP server '${name}': the connection closed during authorization`));
    inflight ??= run(challenge, force)
      .catch((error: unknown) => {
        throw failure(name, error);
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  }

  /** The access token to send now: refreshed first when it expired and a refresh token exists. */
  async function currentToken(): Promise<string | undefined> {
    if (inflight) await inflight.catch(() => {});
    loaded ??= provider.load();
    await loaded;
    const token = usableToken(provider);
    if (token !== undefined) return token;
    const tokens = provider.record.tokens;
    const refreshable = tokens?.refresh_token !== undefined || settings.grant === 'client_credentials';
    if (!tokens?.access_token || !refreshable) return undefined;
    await authorize(undefined);
    return usableToken(provider);
  }

  return {
    provider,
    wrap(next) {
      return async (url, init) => {
        // The token goes to the server's own origin only (an SSE endpoint event cannot redirect it).
        if (new URL(url instanceof URL ? url.href : String(url)).origin !== serverUrl.origin) return next(url, init);
        let sent = await currentToken();
        let response = await next(url, withBearer(init, sent));
        const challenge = readChallenge(response);
        if (!challenge) return response;
        const before = sent;
        await provider.load().catch(() => {});
        const fresh = usableToken(provider);
        // Another request, or `capnode servers login` in another process, may have stored a newer token.
        if (!(challenge.kind === 'unauthorized' && fresh !== undefined && fresh !== before)) await authorize(challenge);
        // Just obtained: sent even when its lifetime is shorter than the expiry margin.
        sent = provider.record.tokens?.access_token;
        if (sent === undefined || (sent === before && challenge.kind === 'insufficient_scope')) return response;
        await response.body?.cancel().catch(() => {});
        response = await next(url, withBearer(init, sent));
        return response;
      };
    },
    async authorize({ force = false } = {}) {
      await authorize(undefined, force);
    },
    async close() {
      closed = true;
      await listener?.close();
      listener = undefined;
    },
  };
}
