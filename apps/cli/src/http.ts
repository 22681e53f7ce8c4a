import { request as httpRequest, type IncomingMessage } from 'node:http';
import { CliError } from './errors.js';

/** Where the CLI talks to and how it explains a failure to the user. */
export interface Endpoint {
  readonly url: string;
  readonly token: string | undefined;
  /** How to find the right token, used in the 401 message. */
  readonly tokenHint: string;
}

export interface HttpResult {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly response: IncomingMessage;
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN']);

/** The "no host" message, with the command that fixes it. */
export function notRunningMessage(url: string): string {
  let hint = 'capnode serve';
  try {
    const parsed = new URL(url);
    if (parsed.port && parsed.port !== '8765') hint = `capnode serve --port ${parsed.port}`;
  } catch {
    // An invalid URL was rejected earlier; keep the plain hint.
  }
  return `no capnode host on ${url} — start one with: ${hint}`;
}

/**
 * One HTTP request over `node:http` (cheaper to load than `fetch`, and without its 5-minute
 * header timeout, so a call waiting for an approval is not cut off). Maps a refused connection and
 * a 401 to {@link CliError}s that say how to fix them.
 */
export function send(
  endpoint: Endpoint,
  target: string,
  init: { method: 'GET' | 'POST' | 'DELETE'; body?: string; headers?: Record<string, string>; signal?: AbortSignal },
): Promise<HttpResult> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return Promise.reject(new CliError('usage', `invalid URL '${target}' — expected something like http://127.0.0.1:8765/`));
  }
  if (url.protocol !== 'http:') return Promise.reject(new CliError('usage', `unsupported URL '${target}' — the capnode host speaks plain http on loopback`));
  const headers: Record<string, string> = { ...init.headers };
  if (endpoint.token !== undefined) headers.authorization = `Bearer ${endpoint.token}`;
  if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(init.body));
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method, headers, agent: false, ...(init.signal ? { signal: init.signal } : {}) }, (response) => {
      const status = response.statusCode ?? 0;
      if (status === 401) {
        response.resume();
        reject(new CliError('unauthorized', `the host at ${endpoint.url} refused the token (HTTP 401). ${endpoint.tokenHint}`));
        return;
      }
      resolve({ status, headers: response.headers, response });
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (init.signal?.aborted) reject(new CliError('interrupted', 'interrupted'));
      else if (error.code && UNREACHABLE.has(error.code)) reject(new CliError('unreachable', notRunningMessage(endpoint.url), { cause: error }));
      else reject(new CliError('failure', `request to ${endpoint.url} failed: ${error.message}`, { cause: error }));
    });
    req.end(init.body);
  });
}

/** Reads a response body as text, up to `limit` bytes. */
export async function readText(response: IncomingMessage, limit = 64 * 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      response.destroy();
      throw new CliError('failure', `response from the host exceeded ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A CliError for an unexpected HTTP status, quoting the start of the body. */
export async function unexpectedStatus(endpoint: Endpoint, result: HttpResult): Promise<CliError> {
  const body = (await readText(result.response).catch(() => '')).trim().slice(0, 500);
  const detail = body ? `: ${body}` : '';
  if (result.status === 403) return new CliError('failure', `the host at ${endpoint.url} refused the request (HTTP 403${detail})`);
  return new CliError('failure', `the host at ${endpoint.url} answered HTTP ${result.status}${detail}`);
}
