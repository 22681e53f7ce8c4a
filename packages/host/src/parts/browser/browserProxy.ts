import { realpath, readFile, stat } from 'node:fs/promises';
import { sep } from 'node:path';
import { CapabilityError, defineCommand, type AvailabilityProbe, type CapabilityErrorCode, type CommandDefinition, type CommandSuccess } from '@capnode/capabilities';
import { createDeadline, mimeTypeOfName } from '@capnode/toolkit';
import { z } from 'zod';

/**
 * Largest file one `browser.proxy` answer or upload carries: OpenClaw's browser-proxy limit, which
 * `browser.upload` holds too (a test keeps the two equal; the pack is not imported here, so the host
 * loads it only when it starts the browser).
 */
export const BROWSER_PROXY_MAX_FILE_BYTES = 10 * 1024 * 1024;
/** Largest sum of the files of one answer or upload, raw. */
export const BROWSER_PROXY_MAX_TOTAL_BYTES = 16 * 1024 * 1024;
/** Largest answer, files as base64 included, serialized (below the gateway's 25 MiB frame). */
export const BROWSER_PROXY_MAX_ENCODED_BYTES = 24 * 1024 * 1024;
/** Most files one answer or upload carries. */
export const BROWSER_PROXY_MAX_FILES = 256;

/** Where `browser.proxy` sends: the running browser-control service, or why there is none. */
export interface BrowserProxyTarget {
  readonly url: string;
  readonly port: number;
  readonly token: string;
  /** The only directory answer files are read from (the service's screenshots). */
  readonly mediaDir: string;
}

export interface BrowserProxyOptions {
  /** Starts the service when needed; rejects when it cannot run. */
  readonly target: () => Promise<BrowserProxyTarget>;
  /** Port named in the "not reachable" error when the service could not start. */
  readonly expectedPort: () => number;
  /** Profiles the gateway may use (`pluginSettings.browser.allowProfiles`); empty allows all. */
  readonly allowProfiles: () => readonly string[];
  readonly availability?: AvailabilityProbe;
}

const input = z.object({
  method: z.string().max(16).optional().describe('GET (default), POST or DELETE.'),
  path: z.string().min(1).max(2048).describe('A browser-control path such as /tabs or /snapshot: never a URL.'),
  query: z.record(z.string().max(256), z.union([z.string().max(8192), z.number(), z.boolean(), z.null()])).optional().describe('Query parameters, e.g. { targetId, selector }.'),
  body: z.unknown().optional().describe('JSON body of a POST, e.g. { url } or { kind, ref, text }.'),
  timeoutMs: z.number().int().min(1).max(120_000).optional().describe('Longest wait, in ms (default 60000).'),
  profile: z.string().max(128).optional().describe('Browser profile: capnode (also called openclaw), the only one.'),
  errorEnvelope: z.string().max(32).optional().describe('"browser-v1": a route failure is answered as { error: { status, body } } (OpenClaw gateway).'),
  upload: z.unknown().optional().describe('OpenClaw\'s upload envelope ({ envelope: "browser-upload-v1", files: [{ name, contentBase64 }] }) for POST /hooks/file-chooser: the files the gateway read for it.'),
});

/** OpenClaw's envelope of the files a gateway sends with `POST /hooks/file-chooser`. */
const UPLOAD_ENVELOPE = 'browser-upload-v1';
const MAX_ENCODED_FILE_CHARS = Math.ceil(BROWSER_PROXY_MAX_FILE_BYTES / 3) * 4;

function uploadRefusal(message: string, reason: string, code: CapabilityErrorCode = 'invalid_arguments', extra: Record<string, unknown> = {}): CapabilityError {
  return new CapabilityError(code, message, { data: { reason, ...extra } });
}

/**
 * The body to send for a file-chooser request: an upload envelope's files checked (OpenClaw's rules: its
 * envelope name, 1..256 files, each a name and canonical base64, ≤ 10 MiB each, ≤ 16 MiB together) and put
 * in the body as `files`, any `paths` dropped; or, without one, `paths` that are not URLs. Other requests
 * may not carry an envelope. Throws before anything is sent.
 */
export function uploadBody(method: string, path: string, body: unknown, upload: unknown): unknown {
  const chooser = method === 'POST' && path === '/hooks/file-chooser';
  if (upload === undefined) {
    const paths = chooser && body && typeof body === 'object' ? (body as { paths?: unknown }).paths : undefined;
    if (Array.isArray(paths) && paths.some((entry) => typeof entry === 'string' && /^[a-z][a-z0-9+.-]+:/i.test(entry.trim()))) {
      throw uploadRefusal('Upload paths are files on this machine, not URLs.', 'url_as_path');
    }
    return body;
  }
  if (!chooser) throw uploadRefusal('An upload envelope goes with POST /hooks/file-chooser only.', 'upload');
  const envelope = upload as { envelope?: unknown; files?: unknown } | null;
  if (!envelope || typeof envelope !== 'object' || envelope.envelope !== UPLOAD_ENVELOPE || !Array.isArray(envelope.files) || envelope.files.length === 0) {
    throw uploadRefusal('invalid browser proxy upload envelope', 'invalid_upload');
  }
  if (envelope.files.length > BROWSER_PROXY_MAX_FILES) throw uploadRefusal(`browser proxy request exceeds ${BROWSER_PROXY_MAX_FILES} file limit`, 'too_many_files');
  let total = 0;
  const files = envelope.files.map((entry: unknown) => {
    const file = entry as { name?: unknown; contentBase64?: unknown } | null;
    if (!file || typeof file.name !== 'string' || !file.name.trim() || typeof file.contentBase64 !== 'string') throw uploadRefusal('invalid browser proxy upload file', 'invalid_upload');
    const encoded = file.contentBase64;
    // Longer than the encoding of the largest file allowed: refused by its length, never decoded.
    const decoded = encoded.length > MAX_ENCODED_FILE_CHARS ? undefined : Buffer.from(encoded, 'base64');
    const bytes = decoded === undefined ? Math.floor((encoded.length * 3) / 4) : decoded.byteLength;
    if (decoded === undefined || bytes > BROWSER_PROXY_MAX_FILE_BYTES) throw uploadRefusal('browser proxy file exceeds 10 MiB limit', 'file_too_large', 'payload_too_large', { bytes });
    total += bytes;
    if (total > BROWSER_PROXY_MAX_TOTAL_BYTES) throw uploadRefusal('browser proxy files exceed 16 MiB aggregate limit', 'upload_too_large', 'payload_too_large', { bytes: total });
    if (decoded.toString('base64') !== encoded) throw uploadRefusal('invalid browser proxy upload encoding', 'invalid_upload');
    return { name: file.name, contentBase64: encoded };
  });
  const fields = body && typeof body === 'object' && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {};
  delete fields.paths;
  return { ...fields, files };
}

/** OpenClaw's opt-in for route failures as a payload instead of an invoke error. */
const ERROR_ENVELOPE = 'browser-v1';

const CODES = new Set<string>(['invalid_arguments', 'denied', 'approval_timeout', 'timeout', 'cancelled', 'unsupported', 'unavailable', 'consent_required', 'payload_too_large', 'busy', 'failed']);

/** The control path of a request, or why it is refused: a path only, never a URL, no query or fragment of its own. */
export function checkProxyPath(raw: string): string {
  const path = raw.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('//') || path.includes('\\')) {
    throw new CapabilityError('invalid_arguments', 'browser.proxy takes a browser-control path such as /tabs, not a URL.', { data: { reason: 'url_as_path' } });
  }
  if (/[?#\s]/.test(path)) throw new CapabilityError('invalid_arguments', 'path is a bare control path: put parameters in query.', { data: { reason: 'invalid_path' } });
  // The path the service will see: fetch resolves `..`, `.` and their percent-encoded spellings, so every
  // check (the /profiles rule, the gateway's view in the audit) must look at the resolved path.
  const resolved = new URL(path.startsWith('/') ? path : `/${path}`, 'http://control.invalid').pathname;
  return resolved;
}

/** The file paths an answer names (OpenClaw's rule: `path`, `imagePath`, `download.path`, `downloads[].path`; shallow). */
export function answerFilePaths(result: unknown): string[] {
  const paths = new Set<string>();
  const record = (value: unknown) => (value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined);
  const add = (owner: Record<string, unknown> | undefined, key: string) => {
    const value = owner?.[key];
    if (typeof value === 'string' && value.trim()) paths.add(value.trim());
  };
  const root = record(result);
  add(root, 'path');
  add(root, 'imagePath');
  add(record(root?.download), 'path');
  if (Array.isArray(root?.downloads)) for (const entry of root.downloads) add(record(entry), 'path');
  return [...paths];
}

/** Reads the answer's files within the limits (each ≤ 10 MiB, ≤ 16 MiB together), only inside `mediaDir`. */
export async function readAnswerFiles(paths: readonly string[], mediaDir: string): Promise<{ path: string; base64: string; mimeType: string }[]> {
  if (paths.length > BROWSER_PROXY_MAX_FILES) throw new CapabilityError('payload_too_large', `browser proxy response exceeds ${BROWSER_PROXY_MAX_FILES} file limit`);
  const root = await realpath(mediaDir).catch(() => mediaDir);
  let total = 0;
  const files = [];
  for (const path of paths) {
    const real = await realpath(path).catch(() => undefined);
    const info = real === undefined ? undefined : await stat(real).catch(() => undefined);
    if (!real || !info?.isFile() || !real.startsWith(root + sep)) throw new CapabilityError('failed', `browser proxy file read failed for ${path}: not a file of the browser-control service`);
    total += info.size;
    if (info.size > BROWSER_PROXY_MAX_FILE_BYTES) throw new CapabilityError('payload_too_large', 'browser proxy file exceeds 10 MiB limit', { data: { path, bytes: info.size } });
    if (total > BROWSER_PROXY_MAX_TOTAL_BYTES) throw new CapabilityError('payload_too_large', 'browser proxy files exceed 16 MiB aggregate limit', { data: { bytes: total } });
    files.push({ path, base64: (await readFile(real)).toString('base64'), mimeType: mimeTypeOfName(real) });
  }
  return files;
}

function unreachable(port: number): CapabilityError {
  return new CapabilityError('unavailable', `Browser control host is not reachable on 127.0.0.1:${port}. Start capnode with Chromium installed and the browser plugin loaded.`);
}

/** The one profile a request names, as `profile` or as `query.profile`; two different names are refused. */
function requestedProfile(profile: string | undefined, query: Record<string, unknown> | undefined): string | undefined {
  const direct = profile?.trim() || undefined;
  const raw = query?.profile;
  const inQuery = raw === undefined || raw === null ? undefined : String(raw).trim() || undefined;
  if (direct !== undefined && inQuery !== undefined && direct !== inQuery) {
    throw new CapabilityError('invalid_arguments', 'profile and query.profile name different profiles.', { data: { reason: 'profile_conflict' } });
  }
  return direct ?? inQuery;
}

function checkProfile(profile: string | undefined, allowed: readonly string[], path: string): void {
  if (allowed.length === 0) return;
  const requested = profile?.trim() || undefined;
  if (path === '/profiles' && requested === undefined) return;
  if (!allowed.includes(requested ?? 'capnode')) throw new CapabilityError('invalid_arguments', 'browser profile not allowed', { data: { reason: 'profile_not_allowed' } });
}

async function send(target: BrowserProxyTarget, method: string, path: string, query: URLSearchParams, body: unknown, signal: AbortSignal): Promise<{ status: number; json: Record<string, unknown> }> {
  const url = `${target.url}${path}${query.size > 0 ? `?${query}` : ''}`;
  const headers: Record<string, string> = { authorization: `Bearer ${target.token}` };
  if (method === 'POST') headers['content-type'] = 'application/json';
  const timedOut = () => new CapabilityError('timeout', `browser proxy request ${method} ${path} timed out or was cancelled.`);
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, { method, headers, ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}), signal, redirect: 'error' });
  } catch {
    if (signal.aborted) throw timedOut();
    throw unreachable(target.port);
  }
  try {
    text = await response.text();
  } catch {
    if (signal.aborted) throw timedOut();
    throw new CapabilityError('failed', `Browser control host broke off its answer to ${method} ${path} (HTTP ${response.status}).`);
  }
  try {
    const json = JSON.parse(text) as unknown;
    return { status: response.status, json: json && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : { value: json } };
  } catch {
    throw new CapabilityError('failed', `Browser control host returned invalid JSON (HTTP ${response.status}).`);
  }
}

/**
 * `browser.proxy`: OpenClaw's node command for a gateway node's browser. Forwards `{ method, path,
 * query, body, timeoutMs, profile }` to capnode's browser-control service on loopback and answers
 * `{ result, files? }`, each file a screenshot the answer names, read within the limits. A URL as
 * `path` is refused before anything is sent; every browser action passes the `browser` consent
 * inside the service.
 */
export function createBrowserProxyCommand(options: BrowserProxyOptions): CommandDefinition {
  return defineCommand({
    name: 'browser.proxy',
    description:
      "Forwards one request to capnode's browser-control service (OpenClaw's routes: /, /tabs, /tabs/open, /navigate, /snapshot, /act, /screenshot, /text, /hooks/file-chooser, DELETE /tabs/:id) and returns its answer with any screenshot files as base64. Each browser action it causes needs the browser consent.",
    annotations: { title: 'Browser control request', openWorld: true },
    // The service's GET routes only read (status, tabs, snapshot, text); POST and DELETE act.
    classificationByArgument: { method: { GET: 'read_only', get: 'read_only' } },
    input,
    ...(options.availability ? { availability: options.availability } : {}),
    execute: (args, ctx) => proxyRequest(options, args, ctx.signal),
  });
}

/**
 * `browser.proxy.upload.v1`: the command OpenClaw's gateway invokes for `browser.request` uploads (a
 * `POST /hooks/file-chooser` carrying the files it read, in a `browser-upload-v1` envelope), declared so the
 * gateway sends uploads to this node. Same arguments and answer as `browser.proxy`; an envelope is required.
 */
export function createBrowserProxyUploadCommand(options: BrowserProxyOptions): CommandDefinition {
  return defineCommand({
    name: 'browser.proxy.upload.v1',
    description: "OpenClaw's browser upload over browser.proxy: POST /hooks/file-chooser with the gateway's files (a browser-upload-v1 envelope), each ≤ 10 MiB, ≤ 16 MiB together. Needs the browser consent.",
    annotations: { title: 'Browser upload request', openWorld: true },
    input,
    ...(options.availability ? { availability: options.availability } : {}),
    execute: (args, ctx) => {
      if (args.upload === undefined) throw new CapabilityError('invalid_arguments', 'browser.proxy.upload.v1 carries an upload envelope.', { data: { reason: 'upload' } });
      return proxyRequest(options, args, ctx.signal);
    },
  });
}

/** One `browser.proxy` request: checked (path, method, profile, upload), sent, and its answer and files returned. */
async function proxyRequest(options: BrowserProxyOptions, args: z.output<typeof input>, callSignal: AbortSignal): Promise<CommandSuccess> {
  const path = checkProxyPath(args.path);
  const method = (args.method ?? 'GET').toUpperCase();
  if (method !== 'GET' && method !== 'POST' && method !== 'DELETE') throw new CapabilityError('invalid_arguments', 'method is GET, POST or DELETE.');
  const body = uploadBody(method, path, args.body, args.upload);
  const profile = requestedProfile(args.profile, args.query);
  checkProfile(profile, options.allowProfiles(), path);
  const query = new URLSearchParams();
  if (profile) query.set('profile', profile);
  for (const [key, value] of Object.entries(args.query ?? {})) if (value !== null && key !== 'profile') query.set(key, String(value));
  let target: BrowserProxyTarget;
  try {
    target = await options.target();
  } catch {
    throw unreachable(options.expectedPort());
  }
  using deadline = createDeadline({ timeoutMs: args.timeoutMs ?? 60_000, signal: callSignal });
  const answer = await send(target, method, path, query, body, deadline.signal);
  if (answer.status >= 400) {
    const message = typeof answer.json.error === 'string' ? answer.json.error : `HTTP ${answer.status}`;
    if (args.errorEnvelope === ERROR_ENVELOPE) {
      const failure = { error: { status: answer.status, body: { error: message } } };
      return { ok: true, content: [{ type: 'text', text: JSON.stringify(failure) }], structured: failure };
    }
    const code = typeof answer.json.code === 'string' && CODES.has(answer.json.code) ? (answer.json.code as CapabilityErrorCode) : 'failed';
    throw new CapabilityError(code, message, { data: { status: answer.status } });
  }
  const result = answer.json;
  if (path === '/profiles' && options.allowProfiles().length > 0 && Array.isArray(result.profiles)) {
    result.profiles = result.profiles.filter((entry: { name?: unknown }) => typeof entry?.name === 'string' && options.allowProfiles().includes(entry.name));
  }
  const paths = answerFilePaths(result);
  const files = paths.length === 0 ? undefined : await readAnswerFiles(paths, target.mediaDir);
  const structured = files ? { result, files } : { result };
  const encoded = Buffer.byteLength(JSON.stringify(structured), 'utf8');
  if (encoded > BROWSER_PROXY_MAX_ENCODED_BYTES) throw new CapabilityError('payload_too_large', 'browser proxy payload exceeds 24 MiB encoded limit', { data: { bytes: encoded } });
  const summary = files ? { result, files: files.map((file) => ({ path: file.path, mimeType: file.mimeType, base64Bytes: file.base64.length })) } : { result };
  return { ok: true, content: [{ type: 'text', text: JSON.stringify(summary) }], structured };
}

