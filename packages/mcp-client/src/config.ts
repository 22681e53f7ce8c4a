import { isRefusedEnvKey } from '@capnode/capabilities';
import { z } from 'zod';
import { McpClientError, type ConfigIssue } from './errors.js';
import { expandEnvReferences } from './internal/envReferences.js';

/**
 * Default raw response cap per HTTP/SSE response or stdio line: the base64 size of 10 MiB plus
 * JSON-RPC envelope headroom, so a valid near-limit blob still reaches materialization.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 16_078_168;
/** Default wait for a server to start and finish the MCP handshake. */
export const DEFAULT_CONNECT_TIMEOUT_SECS = 30;
/** Default per-call deadline for a tool call. */
export const DEFAULT_TOOL_TIMEOUT_SECS = 180;
/** Upper bound for `tool_timeout_secs` and `connect_timeout_secs`. */
export const MAX_TIMEOUT_SECS = 600;

/** How a server is reached. `http` tries Streamable HTTP first and falls back to legacy SSE. */
export type McpTransportKind = 'stdio' | 'sse' | 'http';

/** How much an agent may do without asking: `read_only` refuses MCP tool calls, `full` asks only for `always_ask`. */
export type AutonomyLevel = 'read_only' | 'supervised' | 'full';

/**
 * How capnode authenticates to an HTTP/SSE server beyond static `headers`.
 *
 * - `oauth`: OAuth 2.1 through the MCP SDK (protected-resource and authorization-server discovery,
 *   dynamic client registration unless `client_id` is given, PKCE, refresh). `grant:
 *   'client_credentials'` needs `client_id` and `client_secret` and no browser.
 * - `none`: never start an authorization flow, even when the server answers 401.
 *
 * Without `auth`, an HTTP/SSE server that has no `Authorization` header configured gets `oauth`
 * with defaults as soon as it answers 401.
 */
export type McpServerAuth =
  | {
      readonly type: 'oauth';
      readonly grant: 'authorization_code' | 'client_credentials';
      /** A pre-registered client (file key `client_id`); without it the client registers itself (RFC 7591) or uses `clientMetadataUrl`. */
      readonly clientId?: string;
      /** File key `client_secret`. Secret: never log or print it (see {@link redactServerConfig}). */
      readonly clientSecret?: string;
      /**
       * `client_credentials` only (file key `private_key_path`): authenticate with a signed JWT
       * (`private_key_jwt`, RFC 7523) made with this PKCS#8 PEM key (absolute path; the file must not
       * be accessible by other users).
       */
      readonly privateKeyPath?: string;
      /** The JWT signing algorithm for `privateKeyPath` (file key `signing_algorithm`, default `RS256`). */
      readonly signingAlgorithm?: JwtSigningAlgorithm;
      /** Requested when the server's challenge names none. */
      readonly scopes: readonly string[];
      /** Fixed loopback port for the redirect (`http://127.0.0.1:<port>/callback`, file key `redirect_port`); default a random free port. */
      readonly redirectPort?: number;
      /** An https URL used as the client id where the authorization server supports client ID metadata documents (file key `client_metadata_url`). */
      readonly clientMetadataUrl?: string;
    }
  | { readonly type: 'none' };

/** Algorithms `private_key_path` keys can sign client assertions with. */
export type JwtSigningAlgorithm = 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512' | 'ES256' | 'ES384' | 'ES512';

/**
 * One validated server entry, with defaults applied and the transport resolved. The file's
 * snake_case keys (`tool_timeout_secs`, …) are parsed here, once, into camelCase fields; durations
 * are in milliseconds.
 */
export interface McpServerConfig {
  readonly name: string;
  readonly transport: McpTransportKind;
  readonly command?: string;
  readonly args: readonly string[];
  /** Secret values: never log or print them (see {@link redactServerConfig}). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly url?: string;
  /** Secret values: never log or print them (see {@link redactServerConfig}). */
  readonly headers: Readonly<Record<string, string>>;
  readonly enabled: boolean;
  /** Wait for the server to start and finish the handshake, in ms (file: `connect_timeout_secs`). */
  readonly connectTimeoutMs: number;
  /** Deadline of one tool call, in ms (file: `tool_timeout_secs`). */
  readonly toolTimeoutMs: number;
  /** Effective cap (0 in the input means the default; file: `max_response_bytes`). */
  readonly maxResponseBytes: number;
  /** File: `tls_ca_cert_path`. */
  readonly tlsCaCertPath?: string;
  /** File: `pinned_resources`. */
  readonly pinnedResources: readonly string[];
  /** At most this many `tools/call`s to this server at once; more wait their turn. Unset: no cap (file: `max_concurrent_calls`). */
  readonly maxConcurrentCalls?: number;
  /** `false`: the server takes one call at a time (calls are serialized); harnesses should not call its tools in parallel (file: `parallel_calls`). */
  readonly parallelCalls?: boolean;
  /** Disconnect after this many ms without calls; the next call reconnects. Unset: stay connected (file: `idle_timeout_secs`). */
  readonly idleTimeoutMs?: number;
  /** HTTP/SSE only; see {@link McpServerAuth}. */
  readonly auth?: McpServerAuth;
  /**
   * The user vouches for this server's tool annotations (`readOnlyHint`, `destructiveHint`, …):
   * they are republished as hints. Default `false`: they are shown only as the server's claim.
   * Never relaxes the risk profile either way.
   */
  readonly trusted: boolean;
}

/** A named set of servers; an agent's grant is the union of its bundles minus every `exclude` (deny wins). */
export interface McpBundleConfig {
  readonly servers: readonly string[];
  readonly exclude: readonly string[];
}

/** Which bundles an agent gets and which risk profile governs its calls (default: the profile named like the agent). */
export interface McpAgentConfig {
  /** File key `mcp_bundles`. */
  readonly mcpBundles: readonly string[];
  /** File key `risk_profile`. */
  readonly riskProfile?: string;
}

/**
 * Authorization and approval rules for one agent. Entries are exact tool names, `*`, or `prefix*`.
 * The file's snake_case keys (`allowed_tools`, …) are parsed into these camelCase fields once.
 */
export interface RiskProfile {
  /** When non-empty, only these (plus every `<server>__<tool>` name) are reachable. Empty means unrestricted (file key `allowed_tools`). */
  readonly allowedTools: readonly string[];
  /** Always subtracted, including from the auto-admitted MCP names (file key `excluded_tools`). */
  readonly excludedTools: readonly string[];
  /** Nothing is reachable, MCP tools included (file key `deny_all_tools`). */
  readonly denyAllTools: boolean;
  /** Calls that need no approval unless `alwaysAsk` matches (file key `auto_approve`). */
  readonly autoApprove: readonly string[];
  /** Calls that always ask, overriding `autoApprove` and `full` autonomy (file key `always_ask`). */
  readonly alwaysAsk: readonly string[];
  readonly autonomy: AutonomyLevel;
}

/**
 * The validated MCP client configuration, with camelCase fields. Build it with {@link parseMcpConfig}
 * from the file's form (snake_case keys such as `deferred_loading`, `risk_profiles`, `mcp_bundles`).
 */
export interface McpConfig {
  readonly enabled: boolean;
  /** Expose only tool names plus a `tool_search` tool (file key `deferred_loading`). */
  readonly deferredLoading: boolean;
  readonly servers: readonly McpServerConfig[];
  readonly bundles: Readonly<Record<string, McpBundleConfig>>;
  readonly agents: Readonly<Record<string, McpAgentConfig>>;
  /** File key `risk_profiles`. */
  readonly riskProfiles: Readonly<Record<string, RiskProfile>>;
}

/** Options of {@link validateMcpConfig} and {@link parseMcpConfig}. */
export interface McpConfigOptions {
  /**
   * Variables for `${NAME}` (also `${env:NAME}`, `${NAME:-default}`) in server `env` and `headers`
   * values; `$${` is a literal `${`. A reference to an unset variable is an issue. Default: the
   * process environment where there is one (`globalThis.process.env`), else none. `false` checks the
   * references' syntax only and keeps them as written (for validating a stored file whose
   * variables belong to another process).
   */
  readonly env?: Readonly<Record<string, string | undefined>> | false;
}

/** What {@link validateMcpConfig} returns: the whole config, or every problem (nothing half-applies). */
export type McpConfigValidation =
  | { readonly ok: true; readonly config: McpConfig; readonly warnings: readonly ConfigIssue[] }
  | { readonly ok: false; readonly issues: readonly ConfigIssue[]; readonly warnings: readonly ConfigIssue[] };


const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const MANAGED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'mcp-session-id', 'mcp-protocol-version']);
const CONTROL = /[\u0000-\u001f\u007f]/;

const timeoutSecs = (field: string) =>
  z
    .number({ error: `${field} must be a number of seconds` })
    .refine((value) => Number.isFinite(value) && value > 0, { message: 'must be greater than 0' })
    .refine((value) => value <= MAX_TIMEOUT_SECS, { message: `must be at most ${MAX_TIMEOUT_SECS} seconds` });

const toolList = z.array(z.string().min(1, 'must not be empty'));

const authSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({
      type: z.literal('oauth'),
      grant: z.enum(['authorization_code', 'client_credentials'], { error: "must be 'authorization_code' or 'client_credentials'" }).optional(),
      client_id: z.string().min(1, 'must not be empty').max(2048, 'must be at most 2048 characters').optional(),
      client_secret: z.string().min(1, 'must not be empty').max(4096, 'must be at most 4096 characters').optional(),
      private_key_path: z.string().min(1, 'must not be empty').optional(),
      signing_algorithm: z
        .enum(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'], { error: 'must be one of RS256…RS512, PS256…PS512, ES256…ES512' })
        .optional(),
      scopes: z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'must be one scope token (no spaces or quotes)')).max(100, 'must list at most 100 scopes').optional(),
      redirect_port: z.number().int('must be a whole number').min(1, 'must be a port 1-65535').max(65535, 'must be a port 1-65535').optional(),
      client_metadata_url: z.string().optional(),
    }),
    z.strictObject({ type: z.literal('none') }),
  ],
  { error: "must be { type: 'oauth', … } or { type: 'none' }" },
);

const serverShape = z.strictObject({
  name: z
    .string()
    .min(1, 'must not be empty')
    .max(64, 'must be at most 64 characters')
    .refine((value) => !CONTROL.test(value) && value.trim() === value, { message: 'must not contain control characters or surrounding spaces' })
    // `__` separates server and tool in exposed names (`<server>__<tool>`); in a server name it would make them ambiguous.
    .refine((value) => !value.includes('__'), { message: "must not contain '__' (it separates server and tool in <server>__<tool>); use '-' or a single '_'" }),
  transport: z.enum(['stdio', 'sse', 'http'], { error: "must be 'stdio', 'sse' or 'http'" }).optional(),
  command: z.string().min(1, 'must not be empty').optional(),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string({ error: 'must be a string' })).optional(),
  cwd: z.string().min(1, 'must not be empty').optional(),
  url: z.string().optional(),
  headers: z.record(z.string(), z.string({ error: 'must be a string' })).optional(),
  enabled: z.boolean().optional(),
  connect_timeout_secs: timeoutSecs('connect_timeout_secs').optional(),
  tool_timeout_secs: timeoutSecs('tool_timeout_secs').optional(),
  max_response_bytes: z
    .number()
    .int('must be a whole number of bytes')
    .min(0, 'must not be negative')
    .max(1024 * 1024 * 1024, 'must be at most 1 GiB')
    .optional(),
  tls_ca_cert_path: z.string().min(1, 'must not be empty').optional(),
  pinned_resources: z.array(z.string().min(1, 'must not be empty')).optional(),
  max_concurrent_calls: z.number().int('must be a whole number').min(1, 'must be at least 1').max(1024, 'must be at most 1024').optional(),
  parallel_calls: z.boolean().optional(),
  idle_timeout_secs: z
    .number({ error: 'must be a number of seconds' })
    .refine((value) => Number.isFinite(value) && value > 0, { message: 'must be greater than 0' })
    .refine((value) => value <= 86_400, { message: 'must be at most 86400 seconds (one day)' })
    .optional(),
  auth: authSchema.optional(),
  trusted: z.boolean({ error: 'must be true or false' }).optional(),
});

const serverSchema = serverShape.superRefine((server, ctx) => {
  checkServer(server, (path, message) => ctx.addIssue({ code: 'custom', path, message }));
});

const bundleSchema = z.strictObject({
  servers: z.array(z.string()).optional(),
  exclude: z.array(z.string()).optional(),
});

const agentSchema = z.strictObject({
  mcp_bundles: z.array(z.string()).optional(),
  risk_profile: z.string().min(1).optional(),
});

const riskProfileSchema = z.strictObject({
  allowed_tools: toolList.optional(),
  excluded_tools: toolList.optional(),
  deny_all_tools: z.boolean().optional(),
  auto_approve: toolList.optional(),
  always_ask: toolList.optional(),
  autonomy: z.enum(['read_only', 'supervised', 'full'], { error: "must be 'read_only', 'supervised' or 'full'" }).optional(),
});

const configSchema = z.strictObject({
  enabled: z.boolean().optional(),
  deferred_loading: z.boolean().optional(),
  servers: z.array(serverSchema).optional(),
  bundles: z.record(z.string(), bundleSchema).optional(),
  agents: z.record(z.string(), agentSchema).optional(),
  risk_profiles: z.record(z.string(), riskProfileSchema).optional(),
});

type RawConfig = z.output<typeof configSchema>;
type RawServer = z.output<typeof serverShape>;

/** Formats a path like `servers[1].env.NODE_OPTIONS`. */
export function formatConfigPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else {
      const key = String(part);
      out += /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out || '(root)';
}

function isAbsolutePath(value: string): boolean {
  return value.startsWith('/') || /^[A-Za-z]:[\\/]/.test(value) || value.startsWith('\\\\');
}

function checkServer(server: RawServer, add: (path: PropertyKey[], message: string) => void): void {
  const at = (...rest: PropertyKey[]) => rest;
  if (server.parallel_calls === false && (server.max_concurrent_calls ?? 1) > 1) add(at('max_concurrent_calls'), 'must be 1 (or unset) when parallel_calls is false');

  let transport = server.transport;
  if (transport === undefined) {
    if (server.command !== undefined && server.url !== undefined) add(at('url'), 'set either command (stdio) or url (http/sse), not both');
    else if (server.command === undefined && server.url === undefined) add(at(), 'needs command (stdio) or url (http/sse)');
    transport = server.url !== undefined ? 'http' : 'stdio';
  }
  if (transport === 'stdio') {
    if (server.command === undefined) add(at('command'), 'is required for a stdio server');
    for (const field of ['url', 'headers', 'tls_ca_cert_path', 'auth'] as const) {
      if (server[field] !== undefined && !(field === 'url' && server.transport === undefined)) add(at(field), 'is not used by a stdio server');
    }
  } else {
    if (server.url === undefined) add(at('url'), `is required for a ${transport} server`);
    for (const field of ['command', 'args', 'env', 'cwd'] as const) {
      if (server[field] !== undefined && !(field === 'command' && server.transport === undefined)) add(at(field), `is not used by a ${transport} server`);
    }
  }

  if (server.url !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(server.url);
    } catch {
      add(at('url'), 'must be an absolute http:// or https:// URL');
    }
    if (url && url.protocol !== 'http:' && url.protocol !== 'https:') add(at('url'), 'must use http:// or https://');
  }
  if (server.auth?.type === 'oauth') checkOAuth(server.auth, (path, message) => add(at('auth', ...path), message));
  if (server.cwd !== undefined && !isAbsolutePath(server.cwd)) add(at('cwd'), 'must be an absolute path');
  if (server.tls_ca_cert_path !== undefined && !isAbsolutePath(server.tls_ca_cert_path)) add(at('tls_ca_cert_path'), 'must be an absolute path');
  for (const key of Object.keys(server.env ?? {})) {
    if (!ENV_KEY.test(key)) add(at('env', key), 'is not a valid environment variable name');
    else if (isRefusedEnvKey(key)) add(at('env', key), 'is refused: it can hijack the server runtime (NODE_OPTIONS, LD_*, DYLD_* and the like)');
  }
  for (const [key, value] of Object.entries(server.env ?? {})) {
    if (value.includes('\u0000')) add(at('env', key), 'must not contain NUL characters');
  }
  for (const [key, value] of Object.entries(server.headers ?? {})) {
    if (!HEADER_NAME.test(key)) add(at('headers', key), 'is not a valid HTTP header name');
    else if (MANAGED_HEADERS.has(key.toLowerCase())) add(at('headers', key), 'is managed by the transport and cannot be configured');
    if (/[\r\n\u0000]/.test(value)) add(at('headers', key), 'must not contain line breaks or NUL characters');
  }
}

function checkOAuth(auth: Extract<RawServer['auth'], { type: 'oauth' }>, add: (path: PropertyKey[], message: string) => void): void {
  if (auth.grant === 'client_credentials') {
    if (auth.client_id === undefined) add(['client_id'], "is required for grant 'client_credentials'");
    if (auth.client_secret === undefined && auth.private_key_path === undefined) add(['client_secret'], "is required for grant 'client_credentials' (or private_key_path)");
    if (auth.client_secret !== undefined && auth.private_key_path !== undefined) add(['private_key_path'], 'set either client_secret or private_key_path, not both');
    if (auth.redirect_port !== undefined) add(['redirect_port'], "is not used by grant 'client_credentials'");
  } else {
    if (auth.private_key_path !== undefined) add(['private_key_path'], "is used by grant 'client_credentials' only");
  }
  if (auth.private_key_path !== undefined && !isAbsolutePath(auth.private_key_path)) add(['private_key_path'], 'must be an absolute path');
  if (auth.signing_algorithm !== undefined && auth.private_key_path === undefined) add(['signing_algorithm'], 'needs private_key_path');
  if (auth.client_secret !== undefined && auth.client_id === undefined) add(['client_secret'], 'needs client_id');
  for (const field of ['client_id', 'client_secret'] as const) {
    if (auth[field] !== undefined && CONTROL.test(auth[field])) add([field], 'must not contain control characters');
  }
  if (auth.client_metadata_url !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(auth.client_metadata_url);
    } catch {
      // reported below
    }
    if (!url || url.protocol !== 'https:' || url.pathname === '/') add(['client_metadata_url'], 'must be an https:// URL with a path');
  }
}

function normalizeAuth(auth: RawServer['auth']): McpServerAuth | undefined {
  if (auth === undefined) return undefined;
  if (auth.type === 'none') return { type: 'none' };
  return {
    type: 'oauth',
    grant: auth.grant ?? 'authorization_code',
    ...(auth.client_id === undefined ? {} : { clientId: auth.client_id }),
    ...(auth.client_secret === undefined ? {} : { clientSecret: auth.client_secret }),
    ...(auth.private_key_path === undefined ? {} : { privateKeyPath: auth.private_key_path, signingAlgorithm: auth.signing_algorithm ?? 'RS256' }),
    scopes: auth.scopes ?? [],
    ...(auth.redirect_port === undefined ? {} : { redirectPort: auth.redirect_port }),
    ...(auth.client_metadata_url === undefined ? {} : { clientMetadataUrl: auth.client_metadata_url }),
  };
}

function processEnv(): Readonly<Record<string, string | undefined>> {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
}

/** Expands `${…}` in `env` and `headers` values (see {@link McpConfigOptions.env}); issues name the value's path. */
function expandServer(server: RawServer, index: number, env: McpConfigOptions['env'], issues: ConfigIssue[]): RawServer {
  const variables = env === false ? undefined : (env ?? processEnv());
  const expandRecord = (field: 'env' | 'headers'): Record<string, string> | undefined => {
    const record = server[field];
    if (record === undefined) return undefined;
    return Object.fromEntries(
      Object.entries(record).map(([key, value]) => {
        const path = formatConfigPath(['servers', index, field, key]);
        const expanded = expandEnvReferences(value, {
          escape: true,
          resolve: ({ name, fallback }) => {
            if (variables === undefined) return undefined;
            const found = Object.hasOwn(variables, name!) ? variables[name!] : undefined;
            if (found !== undefined) return found;
            if (fallback !== undefined) return fallback;
            issues.push({ path, message: `references the unset environment variable ${name}` });
            return undefined;
          },
          onMalformed: (at) => issues.push({ path, message: `has '\${' at character ${at + 1} that starts no \${NAME} reference (write $\${ for a literal \${)` }),
        });
        if (expanded !== value && (field === 'headers' ? /[\r\n\u0000]/ : /\u0000/).test(expanded)) {
          issues.push({ path, message: `must not contain ${field === 'headers' ? 'line breaks or NUL characters' : 'NUL characters'} (after expanding its \${…} references)` });
        }
        return [key, variables === undefined ? value : expanded];
      }),
    );
  };
  const env_ = expandRecord('env');
  const headers = expandRecord('headers');
  return { ...server, ...(env_ === undefined ? {} : { env: env_ }), ...(headers === undefined ? {} : { headers }) };
}

/** A file's seconds as the runtime's milliseconds (the same product the runtime used to take per call). */
function secondsToMs(seconds: number): number {
  return seconds * 1000;
}

function normalizeServer(server: RawServer): McpServerConfig {
  const transport: McpTransportKind = server.transport ?? (server.url !== undefined ? 'http' : 'stdio');
  const maxBytes = server.max_response_bytes;
  return {
    name: server.name,
    transport,
    ...(server.command === undefined ? {} : { command: server.command }),
    args: server.args ?? [],
    env: server.env ?? {},
    ...(server.cwd === undefined ? {} : { cwd: server.cwd }),
    ...(server.url === undefined ? {} : { url: server.url }),
    headers: server.headers ?? {},
    enabled: server.enabled ?? true,
    connectTimeoutMs: secondsToMs(server.connect_timeout_secs ?? DEFAULT_CONNECT_TIMEOUT_SECS),
    toolTimeoutMs: secondsToMs(server.tool_timeout_secs ?? DEFAULT_TOOL_TIMEOUT_SECS),
    maxResponseBytes: maxBytes === undefined || maxBytes === 0 ? DEFAULT_MAX_RESPONSE_BYTES : maxBytes,
    ...(server.tls_ca_cert_path === undefined ? {} : { tlsCaCertPath: server.tls_ca_cert_path }),
    pinnedResources: server.pinned_resources ?? [],
    ...(server.max_concurrent_calls === undefined ? {} : { maxConcurrentCalls: server.max_concurrent_calls }),
    ...(server.parallel_calls === undefined ? {} : { parallelCalls: server.parallel_calls }),
    ...(server.idle_timeout_secs === undefined ? {} : { idleTimeoutMs: secondsToMs(server.idle_timeout_secs) }),
    ...(server.auth === undefined ? {} : { auth: normalizeAuth(server.auth)! }),
    trusted: server.trusted ?? false,
  };
}

function checkRelations(raw: RawConfig, issues: ConfigIssue[], warnings: ConfigIssue[]): void {
  const servers = raw.servers ?? [];
  const seen = new Map<string, number>();
  servers.forEach((server, index) => {
    const key = server.name.toLowerCase();
    const first = seen.get(key);
    if (first !== undefined) issues.push({ path: formatConfigPath(['servers', index, 'name']), message: `duplicates the name of servers[${first}] (names are compared case-insensitively)` });
    else seen.set(key, index);
  });
  for (const [alias, bundle] of Object.entries(raw.bundles ?? {})) {
    for (const [field, names] of [['servers', bundle.servers ?? []], ['exclude', bundle.exclude ?? []]] as const) {
      names.forEach((name, index) => {
        if (!seen.has(name.toLowerCase())) {
          warnings.push({ path: formatConfigPath(['bundles', alias, field, index]), message: `names no configured server ('${name}'); it grants nothing` });
        }
      });
    }
  }
  const bundles = raw.bundles ?? {};
  const profiles = raw.risk_profiles ?? {};
  warnUngranted(raw, warnings);
  for (const [alias, agent] of Object.entries(raw.agents ?? {})) {
    (agent.mcp_bundles ?? []).forEach((name, index) => {
      if (!Object.hasOwn(bundles, name)) warnings.push({ path: formatConfigPath(['agents', alias, 'mcp_bundles', index]), message: `names no bundle ('${name}'); it grants nothing` });
    });
    if (agent.risk_profile !== undefined && !Object.hasOwn(profiles, agent.risk_profile)) {
      issues.push({ path: formatConfigPath(['agents', alias, 'risk_profile']), message: `names no risk profile ('${agent.risk_profile}')` });
    }
  }
  for (const [alias, profile] of Object.entries(profiles)) {
    if (profile.deny_all_tools && (profile.allowed_tools?.length ?? 0) > 0) {
      issues.push({ path: formatConfigPath(['risk_profiles', alias, 'deny_all_tools']), message: 'cannot be combined with a non-empty allowed_tools' });
    }
  }
}

/** Servers no configured agent is granted (when agents are configured): they are never connected. */
function warnUngranted(raw: RawConfig, warnings: ConfigIssue[]): void {
  const agents = Object.values(raw.agents ?? {});
  if (agents.length === 0) return;
  const bundles = raw.bundles ?? {};
  const granted = new Set<string>();
  for (const agent of agents) {
    const aliases = (agent.mcp_bundles ?? []).filter((alias) => Object.hasOwn(bundles, alias));
    const denied = new Set(aliases.flatMap((alias) => bundles[alias]!.exclude ?? []).map((name) => name.toLowerCase()));
    for (const alias of aliases) for (const name of bundles[alias]!.servers ?? []) if (!denied.has(name.toLowerCase())) granted.add(name.toLowerCase());
  }
  (raw.servers ?? []).forEach((server, index) => {
    if (!granted.has(server.name.toLowerCase())) {
      warnings.push({ path: formatConfigPath(['servers', index]), message: `'${server.name}' is granted to no agent (no agent's mcp_bundles includes it); it is never connected` });
    }
  });
}

/**
 * Validates a raw MCP client configuration (parsed JSON/TOML) and applies defaults.
 *
 * Every problem is reported with its path and reason; on any problem no config is returned, so
 * nothing half-applies. Unknown bundle/server references are warnings (they grant nothing).
 * Messages never echo `env` or `headers` values.
 */
export function validateMcpConfig(input: unknown, options: McpConfigOptions = {}): McpConfigValidation {
  const parsed = configSchema.safeParse(input ?? {});
  const warnings: ConfigIssue[] = [];
  if (!parsed.success) {
    return {
      ok: false,
      warnings,
      issues: parsed.error.issues.map((issue) => ({
        path: formatConfigPath(issue.path),
        message: issue.code === 'unrecognized_keys' ? `unknown key(s): ${issue.keys.join(', ')}` : issue.message,
      })),
    };
  }
  const raw = parsed.data;
  const issues: ConfigIssue[] = [];
  checkRelations(raw, issues, warnings);
  const servers = (raw.servers ?? []).map((server, index) => expandServer(server, index, options.env, issues));
  if (issues.length > 0) return { ok: false, issues, warnings };

  const config: McpConfig = {
    enabled: raw.enabled ?? true,
    deferredLoading: raw.deferred_loading ?? false,
    servers: servers.map(normalizeServer),
    bundles: Object.fromEntries(Object.entries(raw.bundles ?? {}).map(([alias, b]) => [alias, { servers: b.servers ?? [], exclude: b.exclude ?? [] }])),
    agents: Object.fromEntries(
      Object.entries(raw.agents ?? {}).map(([alias, a]) => [alias, { mcpBundles: a.mcp_bundles ?? [], ...(a.risk_profile === undefined ? {} : { riskProfile: a.risk_profile }) }]),
    ),
    riskProfiles: Object.fromEntries(Object.entries(raw.risk_profiles ?? {}).map(([alias, p]) => [alias, riskProfileFromFile(p)])),
  };
  return { ok: true, config, warnings };
}

/** A risk profile with every field defaulted: unrestricted, supervised. */
export function normalizeRiskProfile(profile: { readonly [K in keyof RiskProfile]?: RiskProfile[K] | undefined } = {}): RiskProfile {
  return {
    allowedTools: profile.allowedTools ?? [],
    excludedTools: profile.excludedTools ?? [],
    denyAllTools: profile.denyAllTools ?? false,
    autoApprove: profile.autoApprove ?? [],
    alwaysAsk: profile.alwaysAsk ?? [],
    autonomy: profile.autonomy ?? 'supervised',
  };
}

/** A validated `risk_profiles.<name>` entry of the file as the runtime's {@link RiskProfile}. */
function riskProfileFromFile(profile: z.output<typeof riskProfileSchema>): RiskProfile {
  return normalizeRiskProfile({
    allowedTools: profile.allowed_tools,
    excludedTools: profile.excluded_tools,
    denyAllTools: profile.deny_all_tools,
    autoApprove: profile.auto_approve,
    alwaysAsk: profile.always_ask,
    autonomy: profile.autonomy,
  });
}

/** Renders issues as one readable message, one problem per line. */
export function formatConfigIssues(issues: readonly ConfigIssue[]): string {
  return issues.map((issue) => `- ${issue.path}: ${issue.message}`).join('\n');
}

/**
 * Validates like {@link validateMcpConfig} but throws a {@link McpClientError} (`invalid_config`,
 * with every issue) instead of returning them.
 *
 * @example
 * const { config, warnings } = parseMcpConfig(JSON.parse(text));
 */
export function parseMcpConfig(input: unknown, options: McpConfigOptions = {}): { config: McpConfig; warnings: readonly ConfigIssue[] } {
  const result = validateMcpConfig(input, options);
  if (!result.ok) {
    const count = result.issues.length;
    throw new McpClientError('invalid_config', `Invalid MCP configuration (${count} problem${count === 1 ? '' : 's'}):\n${formatConfigIssues(result.issues)}`, {
      issues: result.issues,
    });
  }
  return { config: result.config, warnings: result.warnings };
}
