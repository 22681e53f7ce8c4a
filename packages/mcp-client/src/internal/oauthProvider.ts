import { randomBytes } from 'node:crypto';
import { createPrivateKeyJwtAuth } from '@modelcontextprotocol/client';
import type {
  AddClientAuthentication,
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { McpServerAuth } from '../config.js';
import { McpClientError } from '../errors.js';
import { loadPrivateKey } from './oauthKey.js';
import type { OAuthRecord, OAuthStore } from './oauthStore.js';

type OAuthSettings = Extract<McpServerAuth, { type: 'oauth' }>;

/** Placeholder redirect while no loopback listener runs (refresh never sends it). */
const IDLE_REDIRECT = 'http://127.0.0.1/callback';

export interface StoreOAuthProviderOptions {
  readonly server: string;
  readonly settings: OAuthSettings;
  readonly store: OAuthStore;
  readonly clientName: string;
  /** Hands the authorization URL to a user agent; without it a needed redirect is `auth_required`. */
  readonly onRedirect?: (url: URL) => Promise<void>;
}

/** The `auth_required` error for `server`, naming the command that fixes it. */
export function authRequired(server: string, why = 'it needs OAuth authorization and no valid token is stored'): McpClientError {
  return new McpClientError('auth_required', `MCP server '${server}' cannot be used: ${why}. Run: capnode servers login ${server}`);
}

/**
 * The SDK's `OAuthClientProvider` over one server's token file: client registration, tokens and
 * discovery state persist; the PKCE verifier and `state` live only in memory for one flow.
 */
export class StoreOAuthProvider implements OAuthClientProvider {
  readonly #options: StoreOAuthProviderOptions;
  #record: OAuthRecord | undefined;
  #redirect: string | undefined;
  #verifier: string | undefined;
  #state: string | undefined;
  readonly clientMetadataUrl?: string;
  /** `private_key_jwt` (RFC 7523) when `private_key_path` is set; the key is read per token request, never kept. */
  readonly addClientAuthentication?: AddClientAuthentication;

  constructor(options: StoreOAuthProviderOptions) {
    this.#options = options;
    const { settings } = options;
    if (settings.clientMetadataUrl !== undefined) this.clientMetadataUrl = settings.clientMetadataUrl;
    const keyPath = settings.privateKeyPath;
    if (keyPath !== undefined && settings.clientId !== undefined) {
      const clientId = settings.clientId;
      this.addClientAuthentication = async (headers, params, url, metadata) => {
        const privateKey = await loadPrivateKey(keyPath, options.server);
        const sign = createPrivateKeyJwtAuth({ issuer: clientId, subject: clientId, privateKey, alg: settings.signingAlgorithm ?? 'RS256' });
        await sign(headers, params, url, metadata);
      };
    }
  }

  /** Reads the token file again (another process, e.g. `capnode servers login`, may have written it). */
  async load(): Promise<OAuthRecord> {
    this.#record = await this.#options.store.read();
    return this.#record;
  }

  get record(): OAuthRecord {
    if (!this.#record) throw new Error('StoreOAuthProvider used before load()');
    return this.#record;
  }

  get interactive(): boolean {
    return this.#options.onRedirect !== undefined && this.#options.settings.grant === 'authorization_code';
  }

  /** The loopback redirect of the flow in progress. */
  setRedirectUrl(url: string | undefined): void {
    this.#redirect = url;
  }

  /** The `state` sent with the last authorization request. */
  get lastState(): string | undefined {
    return this.#state;
  }

  async #save(update: Partial<Omit<OAuthRecord, 'version' | 'server' | 'url'>>, drop: readonly ('client' | 'tokens' | 'discovery')[] = []): Promise<void> {
    const next: Record<string, unknown> = { ...this.record, ...update };
    for (const key of drop) delete next[key];
    this.#record = next as unknown as OAuthRecord;
    await this.#options.store.write(this.#record);
  }

  get redirectUrl(): string | undefined {
    if (this.#options.settings.grant === 'client_credentials') return undefined;
    return this.#redirect ?? this.#record?.client?.redirect_uris?.[0] ?? IDLE_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    const { settings, clientName } = this.#options;
    const scope = settings.scopes.length > 0 ? settings.scopes.join(' ') : undefined;
    if (settings.grant === 'client_credentials') {
      const method = settings.privateKeyPath === undefined ? 'client_secret_basic' : 'private_key_jwt';
      return { client_name: clientName, redirect_uris: [], grant_types: ['client_credentials'], token_endpoint_auth_method: method, ...(scope ? { scope } : {}) };
    }
    return {
      client_name: clientName,
      redirect_uris: [String(this.redirectUrl)],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: settings.clientSecret === undefined ? 'none' : 'client_secret_basic',
      ...(scope ? { scope } : {}),
    };
  }

  state(): string {
    this.#state = randomBytes(24).toString('base64url');
    return this.#state;
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    const { settings } = this.#options;
    const stored = this.#record?.client;
    if (settings.clientId !== undefined) {
      const issuer = stored?.client_id === settings.clientId ? stored.issuer : undefined;
      return { client_id: settings.clientId, ...(settings.clientSecret === undefined ? {} : { client_secret: settings.clientSecret }), ...(issuer ? { issuer } : {}) };
    }
    if (!stored) return undefined;
    // A dynamically registered client is bound to its redirect URIs; a new loopback port needs a new registration.
    const usable = stored.client_id === settings.clientMetadataUrl || !this.#redirect || (stored.redirect_uris ?? []).includes(this.#redirect);
    return usable ? stored : undefined;
  }

  async saveClientInformation(info: StoredOAuthClientInformation): Promise<void> {
    const redirect = this.#redirect;
    const withUris = info as StoredOAuthClientInformation & { redirect_uris?: string[] };
    const redirectUris = withUris.redirect_uris ?? (redirect ? [redirect] : undefined);
    await this.#save({ client: { ...info, ...(redirectUris ? { redirect_uris: redirectUris } : {}) } });
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.#record?.tokens;
  }

  async saveTokens(tokens: StoredOAuthTokens): Promise<void> {
    const previous = this.#record?.tokens;
    const expiresIn = typeof tokens.expires_in === 'number' && Number.isFinite(tokens.expires_in) ? tokens.expires_in : undefined;
    // A refresh answer may omit refresh_token (no rotation): the old one stays valid.
    const refresh = tokens.refresh_token ?? (previous?.issuer === tokens.issuer ? previous?.refresh_token : undefined);
    await this.#save({
      tokens: { ...tokens, ...(refresh ? { refresh_token: refresh } : {}), ...(expiresIn === undefined ? {} : { expires_at: Date.now() + expiresIn * 1000 }) },
    });
  }

  /** The `client_credentials` grant (machine-to-machine); the authorization-code grant keeps the SDK's default. */
  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (this.#options.settings.grant !== 'client_credentials') return undefined;
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    const requested = scope ?? (this.#options.settings.scopes.length > 0 ? this.#options.settings.scopes.join(' ') : undefined);
    if (requested) params.set('scope', requested);
    return params;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (!this.#options.onRedirect) throw authRequired(this.#options.server);
    await this.#options.onRedirect(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    if (this.#verifier === undefined) throw new McpClientError('auth_failed', 'no PKCE code verifier: the authorization was not started by this process');
    return this.#verifier;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') {
      this.#verifier = undefined;
      return;
    }
    const drop = scope === 'all' ? (['client', 'tokens', 'discovery'] as const) : ([scope] as const);
    await this.#save({}, drop);
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await this.#save({ discovery: state });
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.#record?.discovery;
  }
}
