import { spawn } from 'node:child_process';
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, type HttpServerOptions, type McpHttpServer } from '@capnode/mcp-server/node';
import { afterAll, beforeAll } from 'vitest';
import type { Registry } from '@capnode/capabilities';
import { createFixtureInvoker, lateCapability } from './fixtures/capabilities.mjs';
import { eventually } from '../support/poll.js';

export const TOKEN = 'test-token-0123456789';

export type Fixture = ReturnType<typeof createFixtureInvoker>;

/** Starts the production HTTP stack on port 0 over the fixture registry. */
export async function startFixtureServer(
  options: Partial<HttpServerOptions> = {},
): Promise<{ server: McpHttpServer; fixture: Fixture; logs: string[] } & AsyncDisposable> {
  const fixture = createFixtureInvoker();
  const logs: string[] = [];
  const server = await startHttpServer({
    invoker: fixture.invoker,
    port: 0,
    token: TOKEN,
    onLog: (level, message) => logs.push(`${level}: ${message}`),
    ...options,
  });
  return { server, fixture, logs, [Symbol.asyncDispose]: () => server.close() };
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface RawRequestOptions {
  method?: string;
  path?: string;
  /** Sent verbatim; `host` is sent only when given here (no automatic Host header). */
  headers?: OutgoingHttpHeaders;
  body?: string;
  /** Writes the body in pieces with pauses and never ends it when `endBody` is false. */
  drip?: { chunks: string[]; intervalMs: number; endBody?: boolean };
  timeoutMs?: number;
}

/** One HTTP request over a real socket with full control of the headers (missing Host, browser headers, slow bodies). */
export function rawRequest(url: string, options: RawRequestOptions = {}): Promise<RawResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname.replace(/^\[|\]$/g, ''),
        port: target.port,
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        headers: options.headers ?? {},
        setHost: false,
        agent: false,
        timeout: options.timeoutMs ?? 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('raw request timed out')));
    if (options.drip !== undefined) {
      const { chunks, intervalMs, endBody = true } = options.drip;
      let index = 0;
      const next = (): void => {
        if (req.destroyed) return;
        if (index < chunks.length) {
          req.write(chunks[index++] as string);
          setTimeout(next, intervalMs);
        } else if (endBody) req.end();
      };
      next();
      return;
    }
    req.end(options.body);
  });
}

/** Headers of a well-behaved non-browser client. */
export function goodHeaders(url: string, extra: OutgoingHttpHeaders = {}): OutgoingHttpHeaders {
  return { host: new URL(url).host, authorization: `Bearer ${TOKEN}`, ...extra };
}

/** POSTs a JSON-RPC body with good headers (to `path`, default `/`). */
export function postJson(url: string, body: unknown, extra: OutgoingHttpHeaders = {}, path = '/'): Promise<RawResponse> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return rawRequest(url, {
    method: 'POST',
    path,
    headers: goodHeaders(url, { 'content-type': 'application/json', accept: 'application/json', ...extra }),
    body: text,
  });
}

/** Asserts nothing CORS-ish leaked into a response. */
export function accessControlHeaders(headers: IncomingHttpHeaders): string[] {
  return Object.keys(headers).filter((name) => name.toLowerCase().startsWith('access-control-'));
}

const authHeaders = { Authorization: `Bearer ${TOKEN}` };

/** An SDK v2 client connected over streamable HTTP. */
export async function connectV2(url: string, name = 'test-v2'): Promise<ClientV2 & AsyncDisposable> {
  const client = new ClientV2({ name, version: '1.0.0' });
  await client.connect(new HttpTransportV2(new URL(url), { requestInit: { headers: authHeaders } }));
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

/** An SDK v1 (`@modelcontextprotocol/sdk`) client connected over streamable HTTP. */
export async function connectV1(url: string, name = 'test-v1'): Promise<ClientV1 & AsyncDisposable> {
  const client = new ClientV1({ name, version: '1.0.0' });
  await client.connect(new HttpTransportV1(new URL(url), { requestInit: { headers: authHeaders } }));
  return Object.assign(client, { [Symbol.asyncDispose]: () => client.close() });
}

/** A raw HTTP/1.1 answer as read off the socket: status line, headers, body (chunked bodies decoded). */
export interface NetResponse {
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

function decodeChunked(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let position = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', position);
    if (lineEnd < 0) break;
    const size = Number.parseInt(body.subarray(position, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    position = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/**
 * Writes one request with exactly the given request target over a plain `net` socket (`fetch` and
 * `http.request` normalise or refuse unusual targets themselves) and reads the answer until the
 * server closes the connection (`Connection: close` is always sent).
 */
export function netRequest(port: number, target: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<NetResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(15_000, () => socket.destroy(new Error(`no answer for ${target}`)));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks);
      const split = raw.indexOf('\r\n\r\n');
      const head = raw.subarray(0, split < 0 ? raw.length : split).toString('latin1');
      const rest = split < 0 ? Buffer.alloc(0) : raw.subarray(split + 4);
      const body = /\r\ntransfer-encoding:\s*chunked/i.test(head) ? decodeChunked(rest) : rest;
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: body.toString('utf8') });
    });
    const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...options.headers, connection: 'close' };
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const lines = [`${options.method ?? 'GET'} ${target} HTTP/1.1`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
    socket.end(`${lines.join('\r\n')}\r\n\r\n${options.body ?? ''}`);
  });
}

const stdioFixture = fileURLToPath(new URL('./fixtures/stdioServer.mjs', import.meta.url));

/** The stdio fixture server as a child process spoken to in raw lines. */
export interface RawStdio extends AsyncDisposable {
  /** Writes `line` and a newline to the server's stdin as is. */
  write(line: string | Buffer): void;
  /** Sends a request and resolves with the response carrying its id. */
  request(message: { id: string | number } & Record<string, unknown>, timeoutMs?: number): Promise<Record<string, any>>;
  /** Every stdout line so far. */
  readonly lines: readonly string[];
  stderr(): string;
  readonly exited: Promise<number | null>;
}

/** Spawns the stdio fixture (it imports the built packages). */
export function spawnRawStdio(): RawStdio {
  const child = spawn(process.execPath, [stdioFixture], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let pending = '';
  let stderr = '';
  const waiters = new Map<string, (message: Record<string, any>) => void>();
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      lines.push(line);
      let message: Record<string, any> | undefined;
      try {
        message = JSON.parse(line) as Record<string, any>;
      } catch {
        continue;
      }
      const key = JSON.stringify(message?.id ?? null);
      const waiter = waiters.get(key);
      if (waiter && ('result' in message || 'error' in message)) {
        waiters.delete(key);
        waiter(message);
      }
    }
  });
  child.stdin.on('error', () => {});
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    write: (line) => void child.stdin.write(Buffer.concat([Buffer.isBuffer(line) ? line : Buffer.from(line), Buffer.from('\n')])),
    request(message, timeoutMs = 10_000) {
      const key = JSON.stringify(message.id);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(key);
          reject(new Error(`stdio: no response to ${key} within ${timeoutMs} ms; stderr: ${stderr.slice(-500)}`));
        }, timeoutMs);
        waiters.set(key, (response) => {
          clearTimeout(timer);
          resolve(response);
        });
        child.stdin.write(`${JSON.stringify(message)}\n`);
      });
    },
    lines,
    stderr: () => stderr,
    exited,
    async [Symbol.asyncDispose]() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * One fixture server shared by the tests of the calling `describe` block: started in `beforeAll`, closed in `afterAll`.
 * Read `server`, `fixture` and `url` inside tests only (they exist once `beforeAll` has run).
 */
export function useSuiteFixtureServer(options: Partial<HttpServerOptions> = {}): { readonly server: McpHttpServer; readonly fixture: Fixture; readonly url: string } {
  let started: Awaited<ReturnType<typeof startFixtureServer>> | undefined;
  beforeAll(async () => {
    started = await startFixtureServer(options);
  });
  afterAll(async () => {
    await started?.server.close();
  });
  const current = (): Awaited<ReturnType<typeof startFixtureServer>> => {
    if (started === undefined) throw new Error('the suite fixture server is read before beforeAll ran');
    return started;
  };
  return {
    get server() { return current().server; },
    get fixture() { return current().fixture; },
    get url() { return current().server.url; },
  };
}

/** The admin token of {@link useAdminFixtureServer}. */
export const ADMIN_TOKEN = 'admin-token-0123456789';

/**
 * {@link useSuiteFixtureServer} with admin routes on {@link ADMIN_TOKEN} that record every request
 * they receive (`METHOD /path`) in `adminCalls`, for tests proving a request never reached them.
 */
export function useAdminFixtureServer(): ReturnType<typeof useSuiteFixtureServer> & { readonly adminCalls: string[] } {
  const adminCalls: string[] = [];
  const suite = useSuiteFixtureServer({
    admin: {
      token: ADMIN_TOKEN,
      handle: async (request) => {
        const { pathname } = new URL(request.url);
        adminCalls.push(`${request.method} ${pathname}`);
        return new Response(JSON.stringify({ admin: pathname }), { headers: { 'content-type': 'application/json' } });
      },
    },
  });
  return Object.assign(suite, { adminCalls });
}

/**
 * Registers the fixtures' `late.hello` capability on `registry` until the client has counted a
 * tools/list_changed (`changes()` above 0); it stays registered then. The SDK v2 client opens its GET
 * stream in the background after initialized and debounces changes, so a single registration can go unseen.
 */
export async function registerUntilListChanged(registry: Pick<Registry, 'register'>, changes: () => number, what: string): Promise<void> {
  await eventually(async () => {
    const remove = registry.register(lateCapability);
    await new Promise((resolve) => setTimeout(resolve, 700));
    if (changes() > 0) return true;
    remove();
    return false;
  }, { what });
}
