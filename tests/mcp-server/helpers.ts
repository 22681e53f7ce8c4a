import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpTransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer, type HttpServerOptions, type McpHttpServer } from '@capnode/mcp-server/node';
import { createFixtureInvoker } from './fixtures/capabilities.mjs';

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

/** POSTs a JSON-RPC body with good headers. */
export function postJson(url: string, body: unknown, extra: OutgoingHttpHeaders = {}): Promise<RawResponse> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return rawRequest(url, {
    method: 'POST',
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
