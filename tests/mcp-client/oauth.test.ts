import { chmodSync, existsSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseMcpConfig, type McpRuntimeEvent } from '@capnode/mcp-client';
import { createMcpRuntime, loginMcpServer } from '@capnode/mcp-client/node';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { approveInBrowser, startOAuthFixture, type OAuthFixture } from '../support/oauthServer.js';
import { grantAll, memoryLogger, textOf } from './helpers.js';
import { tempDir } from '../support/testHost.js';

const posix = process.platform !== 'win32';

let fixture: OAuthFixture;
afterEach(async () => {
  await fixture?.close();
});

const entry = (extra: Record<string, unknown> = {}) => ({ name: 'secure', url: fixture.mcpUrl, connect_timeout_secs: 10, ...extra });
const serverConfig = (extra: Record<string, unknown> = {}) => parseMcpConfig({ servers: [entry(extra)] }).config.servers[0]!;

async function login(dir: string, extra: Record<string, unknown> = {}) {
  const opened: URL[] = [];
  const result = await loginMcpServer(serverConfig(extra), {
    dir,
    authorize: async ({ url }) => {
      opened.push(url);
      await approveInBrowser(url);
    },
    timeoutMs: 15_000,
  });
  return { result, opened };
}

describe('OAuth against a real authorization server', () => {
  beforeEach(async () => {
    fixture = await startOAuthFixture();
  });

  test('a non-interactive runtime without a token fails with auth_required naming servers login, and registers nothing', async () => {
    using dir = tempDir();
    const logger = memoryLogger();
    await using runtime = await createMcpRuntime(grantAll([entry()]), { agent: 'test', logger, oauth: { dir: dir.path } });
    const [diagnostic] = runtime.diagnostics();
    expect(diagnostic).toMatchObject({ state: 'failed', errorCode: 'auth_required' });
    expect(diagnostic!.error).toContain('capnode servers login secure');
    expect(fixture.stats).toMatchObject({ registrations: 0, authorizations: 0 });
    expect(fixture.stats.bearerRequests).toBe(0);
  });

  test('the server-state event of that failure carries errorCode auth_required, as diagnostics() does', async () => {
    using dir = tempDir();
    await using runtime = await createMcpRuntime(grantAll([entry()]), { agent: 'test', logger: memoryLogger(), oauth: { dir: dir.path }, waitForServers: false });
    const events: McpRuntimeEvent[] = [];
    runtime.subscribe((event) => events.push(event));
    await runtime.ready();
    expect(events).toContainEqual(expect.objectContaining({ type: 'server-state', server: 'secure', state: 'failed', errorCode: 'auth_required' }));
  });

  test('login: discovery, dynamic registration, PKCE, loopback redirect; tokens stored 0600; the runtime then connects without a browser', async () => {
    using dir = tempDir();
    const { result, opened } = await login(dir.path);
    expect(result).toMatchObject({ authorized: true, refreshable: true, tokenFile: join(dir.path, 'secure.json') });
    expect(opened).toHaveLength(1);
    const url = opened[0]!;
    expect(url.origin).toBe(fixture.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(url.searchParams.get('resource')).toBe(fixture.mcpUrl);
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(fixture.stats).toMatchObject({ registrations: 1, authorizations: 1, codeExchanges: 1 });
    if (posix) {
      expect(statSync(result.tokenFile).mode & 0o777).toBe(0o600);
      expect(statSync(dir.path).mode & 0o777).toBe(0o700);
    }
    const stored = JSON.parse(readFileSync(result.tokenFile, 'utf8'));
    expect(stored).toMatchObject({ version: 1, server: 'secure', url: fixture.mcpUrl, client: { client_id: expect.any(String) }, tokens: { access_token: expect.any(String), refresh_token: expect.any(String) } });

    const logger = memoryLogger();
    await using runtime = await createMcpRuntime(grantAll([entry()]), { agent: 'test', logger, oauth: { dir: dir.path } });
    expect(runtime.diagnostics()[0]).toMatchObject({ state: 'connected' });
    expect(textOf(await runtime.call('secure__whoami'))).toContain(`client ${stored.client.client_id}`);
    expect(fixture.stats.authorizations).toBe(1);
    expect(logger.text()).not.toContain(stored.tokens.access_token);
    expect(logger.text()).not.toContain(stored.tokens.refresh_token);
  });

  test('a token the server no longer accepts is refreshed on the 401 and the request replayed; no browser', async () => {
    using dir = tempDir();
    await login(dir.path);
    await using runtime = await createMcpRuntime(grantAll([entry()]), { agent: 'test', logger: memoryLogger(), oauth: { dir: dir.path } });
    const before = JSON.parse(readFileSync(join(dir.path, 'secure.json'), 'utf8')).tokens.access_token as string;
    fixture.expireAccessTokens();
    expect(textOf(await runtime.call('secure__whoami'))).toMatch(/^client /);
    expect(fixture.stats.refreshes).toBe(1);
    expect(fixture.stats.authorizations).toBe(1);
    const after = JSON.parse(readFileSync(join(dir.path, 'secure.json'), 'utf8')).tokens.access_token as string;
    expect(after).not.toBe(before);
  });

  test('legacy SSE: the event-stream GET and the message POSTs carry the token; login and the runtime work the same', async () => {
    using dir = tempDir();
    const sse = { transport: 'sse', url: fixture.sseUrl };
    const { result } = await login(dir.path, sse);
    expect(result.authorized).toBe(true);
    await using runtime = await createMcpRuntime(grantAll([entry(sse)]), { agent: 'test', logger: memoryLogger(), oauth: { dir: dir.path } });
    expect(runtime.diagnostics()[0]).toMatchObject({ state: 'connected', transport: 'sse' });
    expect(textOf(await runtime.call('secure__whoami'))).toMatch(/^client /);
    const token = JSON.parse(readFileSync(result.tokenFile, 'utf8')).tokens.access_token as string;
    expect(fixture.mcpAuthorization.filter((header) => header === `Bearer ${token}`).length).toBeGreaterThanOrEqual(3);
  });

  test('when refresh is refused too, a non-interactive runtime reports auth_required', async () => {
    using dir = tempDir();
    await login(dir.path);
    fixture.revokeAll();
    await using runtime = await createMcpRuntime(grantAll([entry()]), { agent: 'test', logger: memoryLogger(), oauth: { dir: dir.path } });
    expect(runtime.diagnostics()[0]).toMatchObject({ state: 'failed', errorCode: 'auth_required' });
    expect(fixture.stats.authorizations).toBe(1);
  });

  test('tokens stay bound to the server URL: after a url change they are not sent', async () => {
    using dir = tempDir();
    await login(dir.path);
    const other = await startOAuthFixture();
    try {
      const moved = { name: 'secure', url: other.mcpUrl, connect_timeout_secs: 10 };
      await using runtime = await createMcpRuntime(grantAll([moved]), { agent: 'test', logger: memoryLogger(), oauth: { dir: dir.path } });
      expect(runtime.diagnostics()[0]).toMatchObject({ state: 'failed', errorCode: 'auth_required' });
      expect(other.stats.bearerRequests).toBe(0);
    } finally {
      await other.close();
    }
  });

  test('auth: none and a configured Authorization header never start a flow', async () => {
    using dir = tempDir();
    await using none = await createMcpRuntime(grantAll([entry({ auth: { type: 'none' } })]), { agent: 'test', logger: memoryLogger(), oauth: { dir: dir.path, authorize: approveAuthorize } });
    expect(none.diagnostics()[0]!.state).toBe('failed');
    expect(none.diagnostics()[0]!.errorCode).toBeUndefined();
    await using header = await createMcpRuntime(grantAll([entry({ headers: { Authorization: 'Bearer static-token-123' } })]), {
      agent: 'test',
      logger: memoryLogger(),
      oauth: { dir: dir.path, authorize: approveAuthorize },
    });
    expect(header.diagnostics()[0]!.state).toBe('failed');
    expect(fixture.stats).toMatchObject({ registrations: 0, authorizations: 0 });
  });

  test('an interactive runtime (authorize given) runs the browser step itself during connect; close releases the listener', async () => {
    using dir = tempDir();
    const redirects: string[] = [];
    const runtime = await createMcpRuntime(grantAll([entry()]), {
      agent: 'test',
      logger: memoryLogger(),
      oauth: {
        dir: dir.path,
        authorize: async ({ url }) => {
          redirects.push(url.searchParams.get('redirect_uri')!);
          await approveInBrowser(url);
        },
      },
    });
    expect(runtime.diagnostics()[0]).toMatchObject({ state: 'connected' });
    expect(textOf(await runtime.call('secure__whoami'))).toMatch(/^client /);
    expect(fixture.stats).toMatchObject({ registrations: 1, authorizations: 1 });
    expect(redirects).toHaveLength(1);
    await runtime.close();
    await expect(fetch(redirects[0]!)).rejects.toThrow();
  });

  test('login ends at its timeout and on abort, with auth_failed, and leaves no listener behind', async () => {
    using dir = tempDir();
    const redirects: string[] = [];
    const remember = ({ url }: { url: URL }) => void redirects.push(url.searchParams.get('redirect_uri')!);
    const started = performance.now();
    await expect(loginMcpServer(serverConfig(), { dir: dir.path, authorize: remember, timeoutMs: 500 })).rejects.toMatchObject({ code: 'auth_failed' });
    expect(performance.now() - started).toBeLessThan(10_000);
    const controller = new AbortController();
    const aborted = loginMcpServer(serverConfig(), {
      dir: dir.path,
      signal: controller.signal,
      authorize: (request) => {
        remember(request);
        controller.abort();
      },
    });
    await expect(aborted).rejects.toBeDefined();
    expect(redirects).toHaveLength(2);
    for (const redirect of redirects) await expect(fetch(redirect)).rejects.toThrow();
    expect(fixture.stats.codeExchanges).toBe(0);
  });
});

async function approveAuthorize({ url }: { url: URL }): Promise<void> {
  await approveInBrowser(url);
}

describe('OAuth token refresh on expiry', () => {
  test('an access token past its expires_in is refreshed before it is sent', async () => {
    fixture = await startOAuthFixture({ accessTokenSecs: 1 });
    using dir = tempDir();
    await login(dir.path);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const expired = JSON.parse(readFileSync(join(dir.path, 'secure.json'), 'utf8')).tokens.access_token as string;
    const refreshesBefore = fixture.stats.refreshes;
    const seen = fixture.mcpAuthorization.length;
    await using runtime = await createMcpRuntime(grantAll([entry()]), { agent: 'test', logger: memoryLogger(), oauth: { dir: dir.path } });
    expect(runtime.diagnostics()[0]).toMatchObject({ state: 'connected' });
    expect(fixture.stats.refreshes).toBeGreaterThan(refreshesBefore);
    // Refreshed up front: the expired token never reached the server.
    expect(fixture.mcpAuthorization.slice(seen)).not.toContain(`Bearer ${expired}`);
    expect(fixture.mcpAuthorization[seen]).toMatch(/^Bearer at-/);
  });
});

describe('OAuth limits', () => {
  test('an oversized discovery answer (over 1 MiB) fails the authorization at once, without a browser step', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      if (req.method === 'POST') {
        res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${base}/prm"`, 'content-type': 'application/json' }).end('{}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ resource: `${base}/mcp`, authorization_servers: [base], padding: 'x'.repeat(2 * 1024 * 1024) }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    using dir = tempDir();
    let opened = 0;
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
      await using runtime = await createMcpRuntime(grantAll([{ name: 'big', url, connect_timeout_secs: 10 }]), {
        agent: 'test',
        logger: memoryLogger(),
        oauth: { dir: dir.path, authorize: () => void (opened += 1) },
      });
      expect(runtime.diagnostics()[0]).toMatchObject({ state: 'failed', errorCode: 'auth_failed' });
      expect(runtime.diagnostics()[0]!.error).toMatch(/exceeded max_response_bytes \(1048576 bytes\)/);
      expect(opened).toBe(0);
    } finally {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  });
});

describe('OAuth token storage', () => {
  beforeEach(async () => {
    fixture = await startOAuthFixture();
  });

  test.skipIf(!posix)('a symlink planted as the token file is refused and its target left alone', async () => {
    using dir = tempDir();
    using elsewhere = tempDir();
    const target = join(elsewhere.path, 'victim.json');
    writeFileSync(target, 'keep me', { mode: 0o600 });
    symlinkSync(target, join(dir.path, 'secure.json'));
    await expect(login(dir.path)).rejects.toMatchObject({ code: 'auth_failed', message: expect.stringMatching(/symlink/) });
    expect(readFileSync(target, 'utf8')).toBe('keep me');
    expect(lstatSync(join(dir.path, 'secure.json')).isSymbolicLink()).toBe(true);
  });

  test.skipIf(!posix)('a token file other users can read is refused; a symlinked token directory is refused', async () => {
    using dir = tempDir();
    const { result } = await login(dir.path);
    chmodSync(result.tokenFile, 0o644);
    await using runtime = await createMcpRuntime(grantAll([entry()]), { agent: 'test', logger: memoryLogger(), oauth: { dir: dir.path } });
    expect(runtime.diagnostics()[0]).toMatchObject({ state: 'failed', errorCode: 'auth_failed' });
    expect(runtime.diagnostics()[0]!.error).toMatch(/other users can access it/);

    using parent = tempDir();
    const linked = join(parent.path, 'oauth');
    symlinkSync(dir.path, linked);
    await expect(login(linked)).rejects.toMatchObject({ code: 'auth_failed', message: expect.stringMatching(/symlink/) });
    expect(existsSync(join(dir.path, 'secure.json'))).toBe(true);
  });
});
