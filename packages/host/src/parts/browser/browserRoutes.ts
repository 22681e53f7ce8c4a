import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CommandResult } from '@capnode/capabilities';

/** The one profile the service serves: capnode's dedicated browser. `openclaw` names it too, as OpenClaw's agents default to it. */
export const BROWSER_CONTROL_PROFILE = 'capnode';
const PROFILE_ALIASES = new Set([BROWSER_CONTROL_PROFILE, 'openclaw']);

/** One request to the browser-control routes (over HTTP, or dispatched in process). */
export interface BrowserRouteRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly signal: AbortSignal;
}

export interface BrowserRouteResponse {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** Runs one browser command through the host's pipeline (consent, audit) and returns its result. */
export type BrowserInvoke = (command: string, args: Record<string, unknown>, signal: AbortSignal) => Promise<CommandResult>;

export interface BrowserRoutesOptions {
  readonly invoke: BrowserInvoke;
  /** Where `/screenshot` writes its files (the proxy reads files from here only). */
  readonly mediaDir: string;
}

/** HTTP status of a failure code, as OpenClaw's routes answer (`{ error }` bodies). */
const STATUS_OF: Readonly<Record<string, number>> = {
  invalid_arguments: 400,
  consent_required: 403,
  denied: 403,
  approval_timeout: 403,
  unknown_command: 501,
  unavailable: 503,
  busy: 409,
  timeout: 504,
  payload_too_large: 413,
};

class RouteError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
const bool = (value: unknown): boolean | undefined => (typeof value === 'boolean' ? value : value === 'true' ? true : value === 'false' ? false : undefined);
const int = (value: unknown, name: string): number | undefined => {
  if (value === undefined || value === '') return undefined;
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(number) || number < 1) throw new RouteError(400, `${name} must be a positive integer`);
  return number;
};

function fieldsOf(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new RouteError(400, 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** Only defined values: the commands take no `undefined` fields. */
function defined(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}

/** The `browser.act` action of an OpenClaw `/act` body (click, type, select, press, hover by ref). */
function actionOf(body: Record<string, unknown>): Record<string, unknown> {
  const kind = str(body.kind);
  const ref = str(body.ref);
  switch (kind) {
    case 'click':
      return defined({ kind, ref, button: str(body.button), doubleClick: bool(body.doubleClick) });
    case 'type':
      return defined({ kind, ref, text: body.text, submit: bool(body.submit), slowly: bool(body.slowly) });
    case 'select':
      return defined({ kind, ref, values: body.values });
    case 'press':
      return defined({ kind, key: str(body.key), ref });
    case 'hover':
      return defined({ kind, ref });
    case undefined:
      throw new RouteError(400, 'kind is required');
    default:
      throw new RouteError(400, `act kind ${JSON.stringify(kind.slice(0, 40))} is not supported here (click, type, select, press, hover)`);
  }
}

/** A string array, or undefined; anything else in it is refused. */
function strings(value: unknown, name: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'string')) throw new RouteError(400, `${name} must be an array of strings`);
  return value;
}

/**
 * The `browser.upload` arguments of OpenClaw's file-chooser hook body: `paths` (files on this machine),
 * `ref` (click, answer the chooser), `inputRef` or `element` (a CSS selector: set on the input), `targetId`,
 * `timeoutMs`; and capnode's `files` (`{ name, contentBase64 }`, the bytes of a gateway's upload envelope).
 */
function uploadArgs(fields: Record<string, unknown>): Record<string, unknown> {
  const paths = strings(fields.paths, 'paths');
  const files = fields.files;
  if (files !== undefined && (!Array.isArray(files) || files.length === 0)) throw new RouteError(400, 'files must be a non-empty array');
  if (!paths?.length && files === undefined) throw new RouteError(400, 'paths are required');
  if (paths?.length && files !== undefined) throw new RouteError(400, 'paths and files cannot be combined');
  const ref = str(fields.ref);
  if (ref && (str(fields.inputRef) || str(fields.element))) throw new RouteError(400, 'ref cannot be combined with inputRef/element');
  return defined({
    tabId: str(fields.targetId),
    ref,
    inputRef: str(fields.inputRef),
    selector: str(fields.element),
    timeoutMs: int(fields.timeoutMs, 'timeoutMs'),
    ...(paths?.length ? { paths } : { files: (files as unknown[]).map((file) => ({ name: (file as Record<string, unknown>)?.name, base64: (file as Record<string, unknown>)?.contentBase64 })) }),
  });
}

/**
 * The browser-control routes, in OpenClaw's shapes: `GET /`, `GET /profiles`, `POST /start`, `POST /stop`,
 * `GET /tabs`, `POST /tabs/open`, `DELETE /tabs/:targetId`, `POST /navigate`, `GET /snapshot`, `POST /act`,
 * `POST /screenshot`, `GET /text`, `POST /hooks/file-chooser`. Each runs `browser.*` commands through the pipeline, so consent holds.
 */
export function createBrowserRoutes(options: BrowserRoutesOptions): (request: BrowserRouteRequest) => Promise<BrowserRouteResponse> {
  const run = async (command: string, args: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> => {
    const result = await options.invoke(command, args, signal);
    if (!result.ok) {
      const tab = result.error.data?.reason === 'unknown_tab';
      throw new RouteError(tab ? 404 : (STATUS_OF[result.error.code] ?? 500), result.error.message, result.error.code);
    }
    return result.structured ?? {};
  };
  const routes = createRouteTable(run, options.mediaDir);
  return async (request) => {
    try {
      const profile = request.query.profile;
      if (profile !== undefined && profile !== '' && !PROFILE_ALIASES.has(profile)) throw new RouteError(404, `profile ${JSON.stringify(profile.slice(0, 64))} not found`);
      const method = request.method.toUpperCase();
      const tabMatch = /^\/tabs\/([^/]+)$/.exec(request.path);
      if (method === 'DELETE' && tabMatch) {
        const tabId = decodeURIComponent(tabMatch[1]!);
        await run('browser.close', { tabId }, request.signal);
        return { status: 200, body: { ok: true } };
      }
      const route = routes[`${method} ${request.path}`];
      if (!route) throw new RouteError(404, `no route ${method} ${request.path.slice(0, 200)}`);
      return { status: 200, body: await route(request) };
    } catch (error) {
      if (error instanceof RouteError) return { status: error.status, body: { error: error.message, ...(error.code ? { code: error.code } : {}) } };
      if (error instanceof URIError) return { status: 400, body: { error: 'malformed tab id' } };
      return { status: 500, body: { error: 'internal error' } };
    }
  };
}

/** How long a screenshot file stays for `browser.proxy` (or a local client) to read it. */
const MEDIA_KEEP_MS = 10 * 60_000;

/** Removes screenshot files older than {@link MEDIA_KEEP_MS}, so the directory does not grow. */
async function pruneMedia(mediaDir: string, now: number): Promise<void> {
  const names = await readdir(mediaDir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith('browser-')) continue;
    const path = join(mediaDir, name);
    const info = await stat(path).catch(() => undefined);
    if (info && now - info.mtimeMs > MEDIA_KEEP_MS) await rm(path, { force: true });
  }
}

type Run = (command: string, args: Record<string, unknown>, signal: AbortSignal) => Promise<Record<string, unknown>>;

function tabOf(tab: Record<string, unknown>) {
  return { targetId: tab.tabId, title: tab.title, url: tab.url, type: 'page' };
}

function createRouteTable(run: Run, mediaDir: string): Record<string, (request: BrowserRouteRequest) => Promise<Record<string, unknown>>> {
  return {
    'GET /': async ({ signal }) => {
      const status = await run('browser.status', {}, signal);
      const running = status.running === true;
      return { enabled: true, profile: BROWSER_CONTROL_PROFILE, driver: 'openclaw', transport: 'cdp', running, cdpReady: running, pageReady: running, headless: status.headless, userDataDir: status.profileDir, tabs: status.tabs };
    },
    'GET /profiles': async ({ signal }) => {
      const status = await run('browser.status', {}, signal);
      return { profiles: [{ name: BROWSER_CONTROL_PROFILE, driver: 'openclaw', running: status.running === true, tabCount: status.tabs, isDefault: true }] };
    },
    'POST /start': async ({ signal }) => {
      await run('browser.start', {}, signal);
      return { ok: true, profile: BROWSER_CONTROL_PROFILE };
    },
    'POST /stop': async ({ signal }) => ({ ok: true, stopped: (await run('browser.stop', {}, signal)).stopped === true, profile: BROWSER_CONTROL_PROFILE }),
    'GET /tabs': async ({ signal }) => {
      const listed = await run('browser.tabs', {}, signal);
      return { running: listed.running === true, tabs: ((listed.tabs as Record<string, unknown>[] | undefined) ?? []).map(tabOf) };
    },
    'POST /tabs/open': async ({ body, signal }) => {
      const url = str(fieldsOf(body).url);
      if (!url) throw new RouteError(400, 'url is required');
      return tabOf(await run('browser.open', { url }, signal));
    },
    'POST /navigate': async ({ body, signal }) => {
      const fields = fieldsOf(body);
      const url = str(fields.url);
      if (!url) throw new RouteError(400, 'url is required');
      const tab = await run('browser.navigate', defined({ url, tabId: str(fields.targetId) }), signal);
      return { ok: true, targetId: tab.tabId, url: tab.url };
    },
    'GET /snapshot': async ({ query, signal }) => {
      if (query.format !== undefined && query.format !== 'ai' && query.format !== 'aria') throw new RouteError(400, 'format must be "ai" or "aria"');
      if (query.format === 'aria') {
        const aria = await run('browser.snapshot', defined({ tabId: str(query.targetId), format: 'aria', limit: int(query.limit, 'limit') }), signal);
        return { ok: true, format: 'aria', targetId: aria.tabId, url: aria.url, nodes: aria.nodes, ...(aria.truncated === true ? { truncated: true } : {}) };
      }
      const snap = await run('browser.snapshot', defined({ tabId: str(query.targetId), maxChars: int(query.maxChars, 'maxChars') }), signal);
      return { ok: true, format: 'ai', targetId: snap.tabId, url: snap.url, snapshot: snap.snapshot, truncated: snap.truncated, stats: { refs: snap.refs } };
    },
    'POST /hooks/file-chooser': async ({ body, signal }) => {
      const fields = fieldsOf(body);
      await run('browser.upload', uploadArgs(fields), signal);
      return { ok: true };
    },
    'POST /act': async ({ body, signal }) => {
      const fields = fieldsOf(body);
      const tab = await run('browser.act', defined({ tabId: str(fields.targetId), action: actionOf(fields), timeoutMs: int(fields.timeoutMs, 'timeoutMs') }), signal);
      return { ok: true, targetId: tab.tabId, url: tab.url };
    },
    'POST /screenshot': async ({ body, signal }) => {
      const fields = fieldsOf(body);
      const format = fields.type === 'jpeg' ? 'jpeg' : 'png';
      const shot = await run('browser.screenshot', defined({ tabId: str(fields.targetId), fullPage: bool(fields.fullPage), ref: str(fields.ref), format }), signal);
      await mkdir(mediaDir, { recursive: true, mode: 0o700 });
      await pruneMedia(mediaDir, Date.now());
      const path = join(mediaDir, `browser-${randomUUID()}.${format === 'png' ? 'png' : 'jpg'}`);
      await writeFile(path, Buffer.from(String(shot.base64), 'base64'), { mode: 0o600 });
      return { ok: true, path, targetId: shot.tabId, url: shot.url };
    },
    'GET /text': async ({ query, signal }) => {
      const read = await run('browser.text', defined({ tabId: str(query.targetId), selector: str(query.selector), maxChars: int(query.maxChars, 'maxChars') }), signal);
      return { ok: true, targetId: read.tabId, url: read.url, text: read.text, truncated: read.truncated };
    },
  };
}
