import { join } from 'node:path';
import { delay } from '@capnode/toolkit';
import { z } from 'zod';
import { json } from '../content.js';
import { defineCapability, defineCommand, type Availability, type Capability, type CommandContext, type CommandDefinition } from '../contract.js';
import { CapabilityError } from '../errors.js';
import { definePlugin, type PluginContext } from '../plugin.js';
import { findChromiumExecutable } from './internal/chromiumPath.js';
import { HOSTED_PATH_PREFIX, checkCanvasUrl, type CanvasUrlContext } from './internal/canvasUrl.js';
import { toBoundedBase64, imageResult } from './internal/media.js';
import { envOf, platformOf, type PackEnvironment } from './internal/voiceProbe.js';
import type { CanvasContent, CanvasLoad, CanvasWindow } from './internal/canvasWindow.js';
import { canvasFailure, isRemoteCaller, remoteGuard } from './internal/canvasCalls.js';

/** The largest inline HTML `canvas.present` shows (as the Windows tray caps A2UI pushes). */
export const MAX_CANVAS_HTML_BYTES = 4 * 1024 * 1024;
/** The longest script `canvas.eval` runs. */
export const MAX_CANVAS_SCRIPT_CHARS = 1_000_000;
/** The largest `canvas.eval` result returned, in characters. */
export const MAX_CANVAS_EVAL_RESULT_CHARS = 4 * 1024 * 1024;

/**
 * The connected gateway's canvas surface (`pluginSurfaceUrls.canvas`), read at each call; `undefined`
 * when no gateway offers one. Either a getter, or a source that can also refresh the URL's capability
 * (`node.pluginSurface.refresh`) before a hosted path is resolved against it.
 */
export type GatewayCanvasSurface = (() => string | undefined) | GatewayCanvasSurfaceSource;

/** A canvas surface that refreshes: `current()` now, `fresh()` after renewing a URL near its expiry. */
export interface GatewayCanvasSurfaceSource {
  current(): string | undefined;
  /** The URL, refreshed first when near its expiry (or `force`); the current one when a refresh fails. */
  fresh(options: { readonly signal?: AbortSignal; readonly force?: boolean }): Promise<string | undefined>;
}

function surfaceSource(surface: GatewayCanvasSurface | undefined): GatewayCanvasSurfaceSource | undefined {
  if (surface === undefined || typeof surface !== 'function') return surface;
  return { current: surface, fresh: async () => surface() };
}

/** Options of {@link createCanvasCapability}. */
export interface CanvasOptions extends PackEnvironment {
  /** Chromium to drive; default `CAPNODE_CHROMIUM`, then the standard places. */
  readonly executable?: string;
  /** The canvas's browser profile; default `<plugin data dir>/profile`. Required outside the plugin. */
  readonly profileDir: string;
  /** Where gateway-hosted `/__openclaw__/…` paths resolve, and the one private origin a remote caller may open. */
  readonly gatewayCanvasUrl?: GatewayCanvasSurface;
  /** Closes the window when aborted (the plugin passes the host's signal). */
  readonly signal?: AbortSignal;
}

const dimension = z.number().min(100).max(7680);
const position = z.number().min(-16384).max(16384).describe('-1 leaves the position to the window manager.');

const placementShape = { x: position.optional(), y: position.optional(), width: dimension.optional(), height: dimension.optional() };

const presentInput = z.object({
  url: z.string().max(8192).optional().describe('An absolute http(s) URL, or a gateway-hosted /__openclaw__/… path.'),
  target: z.string().max(8192).optional().describe('Alias of url (OpenClaw CLI).'),
  html: z.string().optional().describe(`HTML to show instead of a URL (at most ${MAX_CANVAS_HTML_BYTES} bytes).`),
  placement: z.object(placementShape).optional().describe('Window position and size (gateway form).'),
  ...placementShape,
  title: z.string().max(256).optional().describe('Accepted for the Windows tray; the window shows the page title.'),
  alwaysOnTop: z.boolean().optional().describe('Accepted for the Windows tray; not applied.'),
});

const navigateInput = z.object({ url: z.string().max(8192).optional(), target: z.string().max(8192).optional().describe('Alias of url.') });

const evalInput = z.object({
  javaScript: z.string().max(MAX_CANVAS_SCRIPT_CHARS).optional().describe('The script; its completion value (awaited when a promise) is returned.'),
  script: z.string().max(MAX_CANVAS_SCRIPT_CHARS).optional().describe('Alias of javaScript (Windows tray).'),
  javascript: z.string().max(MAX_CANVAS_SCRIPT_CHARS).optional().describe('Alias of javaScript.'),
});

const snapshotInput = z.object({
  format: z.enum(['png', 'jpeg', 'jpg']).default('png'),
  maxWidth: z.number().int().min(32).max(7680).optional().describe('Downscale to at most this width (aspect kept).'),
  quality: z.number().min(0).max(100).optional().describe('JPEG quality 0..1 (1..100 accepted); default 0.8.'),
  delayMs: z.number().int().min(0).max(10_000).optional().describe('Wait this long before capturing.'),
});

/** Chromium found, and (Linux) a display to show the window on. */
export function probeCanvas(options: Omit<CanvasOptions, 'profileDir'>): Availability {
  const env = envOf(options);
  const executable = options.executable ?? findChromiumExecutable(env);
  if (!executable) return { available: false, install: 'Chromium or Google Chrome (Debian/Ubuntu: apt install chromium), or set CAPNODE_CHROMIUM' };
  const platform = platformOf(options);
  if (platform !== 'darwin' && platform !== 'win32' && !env.DISPLAY && !env.WAYLAND_DISPLAY) return { available: false, install: 'a graphical session for the canvas window: neither DISPLAY nor WAYLAND_DISPLAY is set (Chromium is installed)' };
  return { available: true };
}

/** The window, created on first use; its backend module loads then too. */
function windowSource(options: CanvasOptions): () => Promise<CanvasWindow> {
  let window: Promise<CanvasWindow> | undefined;
  return () => {
    window ??= import('./internal/canvasWindow.js').then(({ createCanvasWindow }) => {
      const executable = options.executable ?? findChromiumExecutable(envOf(options));
      if (!executable) throw new CapabilityError('unavailable', 'No Chromium is installed for the canvas.', { data: { code: 'CANVAS_UNAVAILABLE' } });
      const created = createCanvasWindow({ executable, profileDir: options.profileDir, env: () => envOf(options) });
      if (options.signal?.aborted) void created.close();
      else options.signal?.addEventListener('abort', () => void created.close(), { once: true });
      return created;
    });
    return window;
  };
}

/** The gateway's canvas surface URL now; for a hosted path, renewed first when its capability is near expiry. */
async function gatewaySurfaceFor(raw: string, options: CanvasOptions, ctx: CommandContext): Promise<string | undefined> {
  const source = surfaceSource(options.gatewayCanvasUrl);
  if (source === undefined) return undefined;
  return raw.trim().startsWith(HOSTED_PATH_PREFIX) ? source.fresh({ signal: ctx.signal }) : source.current();
}

/** The URL a caller may open, or the refusal as a CapabilityError (its `data.code` is the gateway's code). */
async function allowedUrl(raw: string, options: CanvasOptions, ctx: CommandContext): Promise<string> {
  const context: CanvasUrlContext = { remote: isRemoteCaller(ctx), gatewayCanvasUrl: await gatewaySurfaceFor(raw, options, ctx) };
  const decision = checkCanvasUrl(raw, context);
  if (!decision.ok) throw new CapabilityError(decision.code, decision.reason, { data: { code: decision.failure } });
  return decision.url;
}

/** HTTP statuses with which the gateway refuses a lapsed or replaced surface capability. */
const REFUSED_CAPABILITY_STATUSES: ReadonlySet<number> = new Set([401, 403]);

/** The main document's HTTP status (Navigation Timing), 0 when unknown. */
const RESPONSE_STATUS_SCRIPT = "performance.getEntriesByType('navigation')[0]?.responseStatus ?? 0";

/**
 * After a hosted path loaded: when the gateway refused its capability (401/403, e.g. it lapsed unused
 * or another client replaced it), renews the surface URL once with `force` and loads the path again,
 * as OpenClaw's own nodes re-resolve their canvas host after a forced refresh.
 */
async function retryRefusedHosted(raw: string, load: CanvasLoad, canvas: CanvasWindow, options: CanvasOptions, ctx: CommandContext): Promise<CanvasLoad> {
  const source = surfaceSource(options.gatewayCanvasUrl);
  if (source === undefined || load.errorText || !raw.trim().startsWith(HOSTED_PATH_PREFIX)) return load;
  const status = await canvas.evaluate(RESPONSE_STATUS_SCRIPT, ctx).catch(() => undefined);
  if (!status?.ok || typeof status.value !== 'number' || !REFUSED_CAPABILITY_STATUSES.has(status.value)) return load;
  const before = source.current();
  const renewed = await source.fresh({ signal: ctx.signal, force: true });
  if (renewed === undefined || renewed === before) return load;
  ctx.log('info', `canvas: the gateway refused its canvas capability (HTTP ${status.value}); loading ${raw} again with a renewed one`);
  const decision = checkCanvasUrl(raw, { remote: isRemoteCaller(ctx), gatewayCanvasUrl: renewed });
  if (!decision.ok) return load;
  return canvas.present({ kind: 'url', url: decision.url }, undefined, remoteGuard({ gatewayCanvasUrl: () => surfaceSource(options.gatewayCanvasUrl)?.current() }, ctx), ctx);
}

async function presentContent(args: z.output<typeof presentInput>, options: CanvasOptions, ctx: CommandContext): Promise<CanvasContent | undefined> {
  const url = args.url ?? args.target;
  if (url !== undefined && args.html !== undefined) throw new CapabilityError('invalid_arguments', 'Give url or html, not both.');
  if (args.html !== undefined) {
    if (Buffer.byteLength(args.html, 'utf8') > MAX_CANVAS_HTML_BYTES) throw new CapabilityError('payload_too_large', `The html is larger than ${MAX_CANVAS_HTML_BYTES} bytes; host it and pass its url instead.`);
    return { kind: 'html', html: args.html };
  }
  return url === undefined ? undefined : { kind: 'url', url: await allowedUrl(url, options, ctx) };
}

function createPresentCommand(options: CanvasOptions, window: () => Promise<CanvasWindow>) {
  return defineCommand({
    name: 'canvas.present',
    description: 'Shows the canvas window (a Chromium app window) with a URL or inline HTML, optionally at a position and size; without either it shows what it showed last.',
    annotations: { title: 'Show the canvas', openWorld: true },
    availability: () => probeCanvas(options),
    input: presentInput,
    async execute(args, ctx) {
      const content = await presentContent(args, options, ctx);
      const placement = { ...args.placement, ...(args.x === undefined ? {} : { x: args.x }), ...(args.y === undefined ? {} : { y: args.y }), ...(args.width === undefined ? {} : { width: args.width }), ...(args.height === undefined ? {} : { height: args.height }) };
      const rounded = Object.fromEntries(Object.entries(placement).map(([key, value]) => [key, Math.round(value as number)]));
      const canvas = await window();
      const shown = canvas.present(content, Object.keys(rounded).length ? rounded : undefined, remoteGuard({ gatewayCanvasUrl: () => surfaceSource(options.gatewayCanvasUrl)?.current() }, ctx), ctx);
      const raw = args.url ?? args.target;
      const load = await shown.then((first) => (raw === undefined ? first : retryRefusedHosted(raw, first, canvas, options, ctx))).catch((error: unknown) => canvasFailure(error, ctx));
      if (load.errorText) canvasFailure(load, ctx);
      return json({ ok: true, presented: true, url: load.url });
    },
  });
}

function createNavigateCommand(options: CanvasOptions, window: () => Promise<CanvasWindow>) {
  return defineCommand({
    name: 'canvas.navigate',
    description: 'Loads a URL (absolute http(s), or a gateway-hosted /__openclaw__/… path) in the canvas, showing it if hidden.',
    annotations: { title: 'Navigate the canvas', openWorld: true },
    availability: () => probeCanvas(options),
    input: navigateInput,
    async execute(args, ctx) {
      const raw = args.url ?? args.target;
      if (raw === undefined) throw new CapabilityError('invalid_arguments', 'canvas.navigate needs a url.');
      const url = await allowedUrl(raw, options, ctx);
      const canvas = await window();
      const load = await canvas
        .present({ kind: 'url', url }, undefined, remoteGuard({ gatewayCanvasUrl: () => surfaceSource(options.gatewayCanvasUrl)?.current() }, ctx), ctx)
        .then((first) => retryRefusedHosted(raw, first, canvas, options, ctx))
        .catch((error: unknown) => canvasFailure(error, ctx));
      if (load.errorText) canvasFailure(load, ctx);
      return json({ ok: true, navigated: true, url: load.url });
    },
  });
}

/** A remote caller reads only what a remote caller put there (or nothing): never a local caller's page. */
function assertReadable(canvas: CanvasWindow, ctx: CommandContext): void {
  if (isRemoteCaller(ctx) && !canvas.guarded) throw new CapabilityError('denied', "The canvas shows a page a local caller opened; a remote caller cannot read it. Present your own content first.", { data: { code: 'CANVAS_LOCAL_CONTENT' } });
}

function createEvalCommand(options: CanvasOptions, window: () => Promise<CanvasWindow>) {
  return defineCommand({
    name: 'canvas.eval',
    description: "Runs JavaScript in the canvas page and returns its value (awaited when a promise) as text in `result`.",
    annotations: { title: 'Run script in the canvas', openWorld: false },
    availability: () => probeCanvas(options),
    input: evalInput,
    async execute(args, ctx) {
      const script = args.javaScript ?? args.script ?? args.javascript;
      if (script === undefined || script.trim() === '') throw new CapabilityError('invalid_arguments', 'canvas.eval needs javaScript.');
      const canvas = await window();
      assertReadable(canvas, ctx);
      const outcome = await canvas.evaluate(script, ctx).catch((error: unknown) => canvasFailure(error, ctx));
      if (!outcome.ok) throw new CapabilityError('failed', `The script threw: ${outcome.exception}`, { data: { code: 'CANVAS_EVAL_FAILED' } });
      const result = typeof outcome.value === 'string' ? outcome.value : (JSON.stringify(outcome.value) ?? 'undefined');
      if (result.length > MAX_CANVAS_EVAL_RESULT_CHARS) throw new CapabilityError('payload_too_large', `The script's value is longer than ${MAX_CANVAS_EVAL_RESULT_CHARS} characters; return less.`);
      return json({ result });
    },
  });
}

function createSnapshotCommand(options: CanvasOptions, window: () => Promise<CanvasWindow>) {
  return defineCommand({
    name: 'canvas.snapshot',
    description: 'Captures the canvas page (PNG or JPEG), optionally downscaled to maxWidth.',
    annotations: { title: 'Capture the canvas', readOnly: true, openWorld: false },
    availability: () => probeCanvas(options),
    input: snapshotInput,
    async execute(args, ctx) {
      const format = args.format === 'png' ? 'png' : 'jpeg';
      const canvas = await window();
      assertReadable(canvas, ctx);
      if (args.delayMs) await delay(args.delayMs, { signal: ctx.signal });
      const quality = args.quality === undefined ? 80 : args.quality <= 1 ? args.quality * 100 : args.quality;
      const shot = await canvas.screenshot({ format, quality, maxWidth: args.maxWidth }, ctx).catch((error: unknown) => canvasFailure(error, ctx));
      const base64 = toBoundedBase64(shot.data, 'The canvas snapshot', 'pass a smaller maxWidth, or format "jpeg" with a lower quality');
      return imageResult({ format, base64, width: shot.width, height: shot.height }, format === 'png' ? 'image/png' : 'image/jpeg');
    },
  });
}

function createSimpleCommands(options: CanvasOptions, window: () => Promise<CanvasWindow>): CommandDefinition[] {
  const hide = defineCommand({
    name: 'canvas.hide',
    description: 'Closes the canvas window; canvas.present shows it again with the same content.',
    annotations: { title: 'Hide the canvas', idempotent: true, openWorld: false },
    availability: () => probeCanvas(options),
    input: z.object({}),
    async execute(_args, ctx) {
      const canvas = await window();
      await canvas.hide();
      return json({ ok: true, hidden: true });
    },
  });
  const caps = defineCommand({
    name: 'canvas.caps',
    description: 'Says what this canvas supports: Chromium renderer, eval, snapshot, navigate, inline HTML, placement; no A2UI.',
    annotations: { title: 'Canvas capabilities', readOnly: true, idempotent: true, openWorld: false },
    availability: () => probeCanvas(options),
    input: z.object({}),
    async execute(_args, ctx) {
      const open = (await window()).isOpen;
      return json({ renderer: 'chromium', eval: true, snapshot: true, navigate: true, html: true, placement: true, visible: open, hostedPaths: surfaceSource(options.gatewayCanvasUrl)?.current() !== undefined, a2ui: { supported: false } });
    },
  });
  return [hide, caps];
}

/** The A2UI commands OpenClaw defines: answered with a typed `unsupported` failure (code `A2UI_UNSUPPORTED`). */
function createA2uiCommands(options: CanvasOptions): CommandDefinition[] {
  return ['canvas.a2ui.push', 'canvas.a2ui.pushJSONL', 'canvas.a2ui.reset', 'canvas.a2ui.dump'].map((name) =>
    defineCommand({
      name,
      description: 'A2UI is not supported by the capnode canvas; always fails with `unsupported` (use canvas.present with html).',
      annotations: { title: name, openWorld: false },
      // Declared with the rest of the canvas only: without Chromium no `canvas` cap reaches the gateway.
      availability: () => probeCanvas(options),
      execute() {
        throw new CapabilityError('unsupported', `${name}: A2UI is not supported by this canvas; show HTML with canvas.present instead.`, { data: { code: 'A2UI_UNSUPPORTED' } });
      },
    }),
  );
}

/**
 * The `canvas` capability: a Chromium `--app` window on the user's display, on its own profile, driven
 * over DevTools (`--remote-debugging-pipe`, no port). Started on first use, closed by `canvas.hide` or
 * when `signal` aborts. It has no consent category: it shows and reads only its own window. Remote
 * callers (gateway, OpenAgent) may not open this machine's or its network's hosts, except the
 * connected gateway's canvas origin; every request of their pages is checked the same way.
 */
export function createCanvasCapability(options: CanvasOptions): Capability {
  const window = windowSource(options);
  const [hide, caps] = createSimpleCommands(options, window);
  return defineCapability({
    category: 'canvas',
    commands: [createPresentCommand(options, window), hide!, createNavigateCommand(options, window), createEvalCommand(options, window), createSnapshotCommand(options, window), caps!, ...createA2uiCommands(options)],
  });
}

/** Settings section `pluginSettings.canvas`: `{ executable?: "/path/to/chromium" }`. */
const canvasSettingsSchema = z.object({ executable: z.string().min(1).optional() });

/** The canvas plugin of the pack; `gatewayCanvasUrl` is the host's port to the connected gateway's canvas surface. */
export function createCanvasPlugin(gatewayCanvasUrl?: GatewayCanvasSurface) {
  return definePlugin((context: PluginContext): Capability => {
    const parsed = canvasSettingsSchema.safeParse(context.settings);
    if (!parsed.success) context.log('warning', `pluginSettings.canvas ignored: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    const executable = parsed.success ? parsed.data.executable : undefined;
    return createCanvasCapability({
      // Read when the window first opens: the data directory is created only then.
      get profileDir() {
        return join(context.dataDir, 'profile');
      },
      signal: context.signal,
      ...(executable ? { executable } : {}),
      ...(gatewayCanvasUrl ? { gatewayCanvasUrl } : {}),
    });
  });
}

/** The canvas plugin without a gateway port (hosted paths are refused as not configured). */
export const canvasPlugin = createCanvasPlugin();
