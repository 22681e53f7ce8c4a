import { describe, expect, test } from 'vitest';
import { DEFAULT_MAX_RESPONSE_BYTES, parseMcpConfig, validateMcpConfig } from './config.js';
import { isMcpClientError } from './errors.js';

const issuesOf = (input: unknown) => {
  const result = validateMcpConfig(input);
  if (result.ok) throw new Error('expected issues');
  return result.issues;
};

describe('validateMcpConfig', () => {
  test('infers the transport from command or url and applies defaults', () => {
    const { config } = parseMcpConfig({
      servers: [
        { name: 'fs', command: 'npx', args: ['-y', 'server'] },
        { name: 'web', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer abc' } },
        { name: 'legacy', transport: 'sse', url: 'http://127.0.0.1:1/sse' },
      ],
    });
    expect(config.servers.map((s) => s.transport)).toEqual(['stdio', 'http', 'sse']);
    const fs = config.servers[0]!;
    expect(fs).toMatchObject({ enabled: true, connectTimeoutMs: 30_000, toolTimeoutMs: 180_000, maxResponseBytes: DEFAULT_MAX_RESPONSE_BYTES, env: {}, pinnedResources: [] });
    expect(config.enabled).toBe(true);
    expect(config.deferredLoading).toBe(false);
  });

  test('max_response_bytes: 0 or unset means the default 16,078,168', () => {
    const { config } = parseMcpConfig({ servers: [{ name: 'a', url: 'https://x', max_response_bytes: 0 }, { name: 'b', url: 'https://x', max_response_bytes: 1234 }] });
    expect(config.servers.map((s) => s.maxResponseBytes)).toEqual([16_078_168, 1234]);
    expect(issuesOf({ servers: [{ name: 'a', url: 'https://x', max_response_bytes: -1 }] })[0]!.path).toBe('servers[0].max_response_bytes');
    expect(issuesOf({ servers: [{ name: 'a', url: 'https://x', max_response_bytes: 1.5 }] })[0]!.path).toBe('servers[0].max_response_bytes');
  });

  test('tool_timeout_secs must be > 0 and at most 600', () => {
    expect(parseMcpConfig({ servers: [{ name: 'a', command: 'x', tool_timeout_secs: 600 }] }).config.servers[0]!.toolTimeoutMs).toBe(600_000);
    expect(parseMcpConfig({ servers: [{ name: 'a', command: 'x', tool_timeout_secs: 0.5 }] }).config.servers[0]!.toolTimeoutMs).toBe(500);
    for (const bad of [0, -1, 601, Number.NaN, '30']) {
      const issues = issuesOf({ servers: [{ name: 'a', command: 'x', tool_timeout_secs: bad }] });
      expect(issues).toHaveLength(1);
      expect(issues[0]!.path).toBe('servers[0].tool_timeout_secs');
    }
    expect(issuesOf({ servers: [{ name: 'a', command: 'x', tool_timeout_secs: 601 }] })[0]!.message).toMatch(/at most 600/);
    expect(issuesOf({ servers: [{ name: 'a', command: 'x', connect_timeout_secs: 0 }] })[0]!.path).toBe('servers[0].connect_timeout_secs');
  });

  test('reports every bad value with its path, and returns no config', () => {
    // Cross-entry rules (duplicate names, profiles) run once every entry is well-formed.
    expect(issuesOf({ servers: [{ name: 'a', command: 'x' }, { name: 'A', command: 'x' }] })[0]!.path).toBe('servers[1].name');
    expect(issuesOf({ risk_profiles: { p: { deny_all_tools: true, allowed_tools: ['x'] } } })[0]!.path).toBe('risk_profiles.p.deny_all_tools');
    const result = validateMcpConfig({
      servers: [
        { name: 'a', command: 'x', env: { NODE_OPTIONS: '--require /tmp/evil.js', LD_PRELOAD: '/tmp/x.so', dyld_insert_libraries: 'y', GOOD: '1' } },
        { name: 'b' },
        { name: 'c', command: 'x', url: 'https://x' },
        { name: 'd', url: 'ftp://x' },
        { name: 'e', transport: 'stdio', command: 'x', headers: { a: 'b' } },
        { name: 'A', command: 'x' },
        { name: 'f', command: 'x', cwd: 'relative/dir', unknown_key: true },
      ],
      risk_profiles: { p: { deny_all_tools: true, allowed_tools: ['x'] } },
    });
    expect(result.ok).toBe(false);
    const paths = result.ok ? [] : result.issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'servers[0].env.NODE_OPTIONS',
        'servers[0].env.LD_PRELOAD',
        'servers[0].env.dyld_insert_libraries',
        'servers[1]',
        'servers[2].url',
        'servers[3].url',
        'servers[4].headers',
        'servers[6].cwd',
        'servers[6]',
      ]),
    );
    expect(paths).not.toContain('servers[0].env.GOOD');
  });

  test('error messages never echo env or header values', () => {
    try {
      parseMcpConfig({ servers: [{ name: 'a', command: 'x', env: { NODE_OPTIONS: 'supersecret-value-1' } }, { name: 'b', url: 'https://x', headers: { 'X-Key': 'supersecret\r\nvalue-2' } }] });
      throw new Error('expected a throw');
    } catch (error) {
      expect(isMcpClientError(error)).toBe(true);
      if (!isMcpClientError(error)) return;
      expect(error.code).toBe('invalid_config');
      expect(error.issues.length).toBe(2);
      expect(error.message).toContain('servers[0].env.NODE_OPTIONS');
      expect(error.message).toContain('servers[1].headers["X-Key"]');
      expect(error.message).not.toContain('supersecret');
    }
  });

  test('transport-specific fields are checked against the transport', () => {
    expect(issuesOf({ servers: [{ name: 'a', transport: 'http', command: 'x' }] }).map((i) => i.path)).toEqual(['servers[0].url', 'servers[0].command']);
    expect(issuesOf({ servers: [{ name: 'a', url: 'https://x', tls_ca_cert_path: 'relative.pem' }] })[0]!.path).toBe('servers[0].tls_ca_cert_path');
    expect(issuesOf({ servers: [{ name: 'a', url: 'https://x', headers: { 'mcp-session-id': 'x' } }] })[0]!.message).toMatch(/managed by the transport/);
  });

  test('unknown bundle and server references are warnings, not errors', () => {
    const result = validateMcpConfig({
      servers: [{ name: 'fs', command: 'x' }],
      bundles: { files: { servers: ['fs', 'typo'] } },
      agents: { assistant: { mcp_bundles: ['files', 'nope'] } },
    });
    expect(result.ok).toBe(true);
    expect(result.warnings.map((w) => w.path)).toEqual(['bundles.files.servers[1]', 'agents.assistant.mcp_bundles[1]']);
  });

  test('an agent naming an unknown risk profile is an error', () => {
    expect(issuesOf({ agents: { a: { risk_profile: 'missing' } } })[0]!.path).toBe('agents.a.risk_profile');
  });

  test("the file's snake_case keys become camelCase fields, once, at parse time", () => {
    const { config } = parseMcpConfig({
      deferred_loading: true,
      agents: { a: { mcp_bundles: ['b'], risk_profile: 'p' } },
      bundles: { b: {} },
      risk_profiles: { p: { allowed_tools: ['x'], excluded_tools: ['y'], auto_approve: ['z'], always_ask: ['w'], autonomy: 'full' }, q: { deny_all_tools: true } },
    });
    expect(config.deferredLoading).toBe(true);
    expect(config.agents).toEqual({ a: { mcpBundles: ['b'], riskProfile: 'p' } });
    expect(config.riskProfiles).toEqual({
      p: { allowedTools: ['x'], excludedTools: ['y'], denyAllTools: false, autoApprove: ['z'], alwaysAsk: ['w'], autonomy: 'full' },
      q: { allowedTools: [], excludedTools: [], denyAllTools: true, autoApprove: [], alwaysAsk: [], autonomy: 'supervised' },
    });
    // The runtime shape is not a file shape: camelCase keys in the file stay unknown keys.
    expect(issuesOf({ deferredLoading: true })[0]!.message).toBe('unknown key(s): deferredLoading');
  });
});


describe('auth', () => {
  test('oauth defaults and the none opt-out; stdio servers take no auth', () => {
    const { config } = parseMcpConfig({
      servers: [
        { name: 'a', url: 'https://x/mcp', auth: { type: 'oauth' } },
        { name: 'b', url: 'https://x/mcp', auth: { type: 'oauth', client_id: 'id', client_secret: 'secret-123456', scopes: ['read', 'write'], redirect_port: 8976 } },
        { name: 'c', url: 'https://x/mcp', auth: { type: 'none' } },
      ],
    });
    expect(config.servers.map((s) => s.auth)).toEqual([
      { type: 'oauth', grant: 'authorization_code', scopes: [] },
      { type: 'oauth', grant: 'authorization_code', clientId: 'id', clientSecret: 'secret-123456', scopes: ['read', 'write'], redirectPort: 8976 },
      { type: 'none' },
    ]);
    expect(issuesOf({ servers: [{ name: 'a', command: 'x', auth: { type: 'oauth' } }] }).map((i) => i.path)).toEqual(['servers[0].auth']);
  });

  test('every auth problem is reported with its path', () => {
    const issues = issuesOf({
      servers: [
        { name: 'a', url: 'https://x', auth: { type: 'oauth', grant: 'client_credentials' } },
        { name: 'b', url: 'https://x', auth: { type: 'oauth', client_secret: 'abcdefgh' } },
        { name: 'c', url: 'https://x', auth: { type: 'oauth', client_metadata_url: 'http://x.example/client.json' } },
        { name: 'd', url: 'https://x', auth: { type: 'oauth', scopes: ['two words'], redirect_port: 70000 } },
        { name: 'e', url: 'https://x', auth: { type: 'basic' } },
        { name: 'f', url: 'https://x', auth: { type: 'oauth', extra: 1 } },
      ],
    });
    const paths = issues.map((issue) => issue.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'servers[0].auth.client_id',
        'servers[0].auth.client_secret',
        'servers[1].auth.client_secret',
        'servers[2].auth.client_metadata_url',
        'servers[3].auth.scopes[0]',
        'servers[3].auth.redirect_port',
        'servers[4].auth.type',
        'servers[5].auth',
      ]),
    );
    expect(JSON.stringify(issues)).not.toContain('abcdefgh');
  });
});

describe('auth private_key_jwt', () => {
  test('client_credentials takes a client secret or a private key, not both; the key path is absolute', () => {
    const { config } = parseMcpConfig({
      servers: [{ name: 'm2m', url: 'https://x/mcp', auth: { type: 'oauth', grant: 'client_credentials', client_id: 'svc', private_key_path: '/etc/capnode/svc.pem', signing_algorithm: 'ES256' } }],
    });
    expect(config.servers[0]!.auth).toEqual({ type: 'oauth', grant: 'client_credentials', clientId: 'svc', privateKeyPath: '/etc/capnode/svc.pem', signingAlgorithm: 'ES256', scopes: [] });
    const issues = issuesOf({
      servers: [
        { name: 'a', url: 'https://x', auth: { type: 'oauth', grant: 'client_credentials', client_id: 'i', client_secret: 'abcdefgh', private_key_path: '/k.pem' } },
        { name: 'b', url: 'https://x', auth: { type: 'oauth', grant: 'client_credentials', client_id: 'i', private_key_path: 'k.pem' } },
        { name: 'c', url: 'https://x', auth: { type: 'oauth', private_key_path: '/k.pem' } },
        { name: 'd', url: 'https://x', auth: { type: 'oauth', grant: 'client_credentials', client_id: 'i', client_secret: 'abcdefgh', signing_algorithm: 'ES256' } },
        { name: 'e', url: 'https://x', auth: { type: 'oauth', grant: 'client_credentials', client_id: 'i', private_key_path: '/k.pem', signing_algorithm: 'HS256' } },
      ],
    });
    expect(issues.map((issue) => issue.path)).toEqual([
      'servers[0].auth.private_key_path',
      'servers[1].auth.private_key_path',
      'servers[2].auth.private_key_path',
      'servers[3].auth.signing_algorithm',
      'servers[4].auth.signing_algorithm',
    ]);
  });
});

describe('${ENV} in env and header values', () => {
  const server = (extra: Record<string, unknown>) => ({ servers: [{ name: 'web', url: 'https://example.com/mcp', ...extra }] });

  test('expands ${NAME}, ${env:NAME} and ${NAME:-default}; $${ is a literal ${', () => {
    const env = { TOKEN: 's3cret-value', USER_AGENT: 'capnode' };
    const { config } = parseMcpConfig(server({ headers: { Authorization: 'Bearer ${TOKEN}', 'User-Agent': '${env:USER_AGENT} ${MISSING:-1.0}', 'X-Literal': 'costs $${PRICE} and $5' } }), { env });
    expect(config.servers[0]!.headers).toEqual({ Authorization: 'Bearer s3cret-value', 'User-Agent': 'capnode 1.0', 'X-Literal': 'costs ${PRICE} and $5' });
    const stdio = parseMcpConfig({ servers: [{ name: 'fs', command: 'x', args: ['${TOKEN}'], env: { API_KEY: '${TOKEN}' } }] }, { env });
    expect(stdio.config.servers[0]!.env).toEqual({ API_KEY: 's3cret-value' });
    expect(stdio.config.servers[0]!.args).toEqual(['${TOKEN}']);
  });

  test('an unset variable or a stray ${ is an issue with its path; values are never echoed', () => {
    const result = validateMcpConfig(server({ headers: { Authorization: 'Bearer ${NOPE}', 'X-Bad': 'a ${ b', 'X-Num': '${1ABC}' } }), { env: {} });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.issues).toEqual([
      { path: 'servers[0].headers.Authorization', message: 'references the unset environment variable NOPE' },
      { path: 'servers[0].headers["X-Bad"]', message: "has '${' at character 3 that starts no ${NAME} reference (write $${ for a literal ${)" },
      { path: 'servers[0].headers["X-Num"]', message: "has '${' at character 1 that starts no ${NAME} reference (write $${ for a literal ${)" },
    ]);
  });

  test('an expanded header value may not smuggle in a line break', () => {
    const issues = issuesOfWith(server({ headers: { 'X-A': '${EVIL}' } }), { EVIL: 'a\r\nHost: evil' });
    expect(issues).toEqual([{ path: 'servers[0].headers["X-A"]', message: 'must not contain line breaks or NUL characters (after expanding its ${…} references)' }]);
  });

  test('env: false checks syntax only and keeps references as written; the default is the process environment', () => {
    const kept = parseMcpConfig(server({ headers: { Authorization: 'Bearer ${CAPNODE_TEST_UNSET_VAR}' } }), { env: false });
    expect(kept.config.servers[0]!.headers.Authorization).toBe('Bearer ${CAPNODE_TEST_UNSET_VAR}');
    expect(validateMcpConfig(server({ headers: { A: '${' } }), { env: false }).ok).toBe(false);
    process.env.CAPNODE_TEST_SET_VAR = 'from-process';
    try {
      expect(parseMcpConfig(server({ headers: { A: '${CAPNODE_TEST_SET_VAR}' } })).config.servers[0]!.headers.A).toBe('from-process');
    } finally {
      delete process.env.CAPNODE_TEST_SET_VAR;
    }
    expect(() => parseMcpConfig(server({ headers: { A: '${CAPNODE_TEST_UNSET_VAR}' } }))).toThrow(/servers\[0\]\.headers\.A: references the unset environment variable CAPNODE_TEST_UNSET_VAR/);
  });
});

function issuesOfWith(input: unknown, env: Record<string, string>) {
  const result = validateMcpConfig(input, { env });
  if (result.ok) throw new Error('expected issues');
  return result.issues;
}

test('trusted must be a boolean and defaults to false', () => {
  expect(parseMcpConfig({ servers: [{ name: 'a', command: 'x' }] }).config.servers[0]!.trusted).toBe(false);
  expect(parseMcpConfig({ servers: [{ name: 'a', command: 'x', trusted: true }] }).config.servers[0]!.trusted).toBe(true);
  expect(issuesOf({ servers: [{ name: 'a', command: 'x', trusted: 'yes' }] })).toEqual([{ path: 'servers[0].trusted', message: 'must be true or false' }]);
});
