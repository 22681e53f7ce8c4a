import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { z } from 'zod';
import { json } from '../content.js';
import { defineCapability, defineCommand, type Availability, type Capability, type CommandDefinition } from '../contract.js';
import { CapabilityError } from '../errors.js';
import { definePlugin, type PluginContext } from '../plugin.js';
import { actSchema, MAX_BROWSER_TEXT_CHARS, refSchema, tabIdSchema, urlSchema } from './internal/browserArgs.js';
import type { BrowserEngine } from './internal/browserEngine.js';
import { findChromiumExecutable } from './internal/chromiumPath.js';
import { guardOf, withErrnoFailures, type FilesOptions } from './internal/filesConfig.js';
import { decodeUploadFiles, MAX_BROWSER_UPLOAD_BASE64_CHARS, MAX_BROWSER_UPLOAD_FILES, readUploadPaths } from './internal/browserUpload.js';
import { filesOptionsFromSettings } from './files.js';
import { imageResult, toBoundedBase64 } from './internal/media.js';

/** Options of {@link createBrowserCapability}. */
export interface BrowserCapabilityOptions {
  /** The dedicated profile's directory, inside capnode's config directory (the plugin uses `<plugin data>/profile`). */
  readonly profileDir: string;
  /** Chromium or Chrome to run; default {@link findChromiumExecutable} (`CAPNODE_CHROMIUM`, then standard paths). */
  readonly executablePath?: string;
  /** Run without a window; default: headless when there is no display to show one on. */
  readonly headless?: boolean;
  /** Environment for finding and running Chromium (PATH, DISPLAY, CAPNODE_CHROMIUM). Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Longest wait for one navigation or action, in ms (default 15 000). */
  readonly actionTimeoutMs?: number;
  /**
   * Where `browser.upload` may read files: the files commands' roots and denied directories (read at
   * each call). Default the files default, the user's home.
   */
  readonly files?: () => FilesOptions;
}

/** The browser capability and the browser it drives; closing it stops Chromium. */
export interface BrowserCapability extends Capability, AsyncDisposable {
  /** The engine, created (not started) on first call; the browser-control service shares it. */
  engine(): Promise<BrowserEngine>;
  close(): Promise<void>;
}

const INSTALL_HINT = 'Chromium or Google Chrome (Debian/Ubuntu: apt install chromium), or CAPNODE_CHROMIUM set to its executable';

const working = new Map<string, Promise<boolean>>();

/** Whether `file --version` runs and exits 0 (once per path and process). */
function runsVersion(file: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  let known = working.get(file);
  if (!known) {
    known = new Promise((resolve) => execFile(file, ['--version'], { env, timeout: 15_000, windowsHide: true }, (error) => resolve(!error)));
    working.set(file, known);
  }
  return known;
}

/** Whether the dedicated browser can run here: a Chromium executable that answers `--version`. */
export async function probeBrowser(options: Pick<BrowserCapabilityOptions, 'executablePath' | 'env'> = {}): Promise<Availability> {
  const env = options.env ?? process.env;
  const file = options.executablePath ?? findChromiumExecutable(env);
  if (!file) return { available: false, install: INSTALL_HINT };
  if (process.platform !== 'win32' && !(await runsVersion(file, env))) return { available: false, install: `a Chromium that runs (${file} --version failed)` };
  return { available: true };
}

function defaultHeadless(env: NodeJS.ProcessEnv): boolean {
  if (process.platform === 'darwin' || process.platform === 'win32') return false;
  return !env.DISPLAY && !env.WAYLAND_DISPLAY;
}

/** Most nodes an aria snapshot returns (OpenClaw's bound), and its default. */
const MAX_ARIA_NODES = 2000;
const DEFAULT_ARIA_NODES = 500;

const maxChars = z.number().int().min(1).max(MAX_BROWSER_TEXT_CHARS).default(MAX_BROWSER_TEXT_CHARS);
const timeoutMs = z.number().int().min(100).max(120_000).optional().describe('Longest wait, in ms.');
const tab = tabIdSchema.optional().describe('Tab id from browser.tabs or browser.open; default the current tab.');

function tabResult(info: { tabId: string; url: string; title: string }, extra: Record<string, unknown> = {}) {
  return json({ ok: true, tabId: info.tabId, url: info.url, title: info.title, ...extra });
}

type EngineOf = () => Promise<BrowserEngine>;

function lifecycleCommands(engineOf: EngineOf, peek: () => BrowserEngine | undefined, describe: () => Record<string, unknown>): CommandDefinition[] {
  return [
    defineCommand({
      name: 'browser.status',
      description: "Reports whether capnode's dedicated browser is running, its profile directory and how many tabs it has; does not start it.",
      annotations: { title: 'Browser status', readOnly: true, idempotent: true },
      input: z.strictObject({}),
      execute: () => json({ ...describe(), ...(peek()?.status() ?? { running: false, tabs: 0 }) }),
    }),
    defineCommand({
      name: 'browser.start',
      description: "Starts capnode's dedicated browser (a Chromium on its own persistent profile, never your everyday one).",
      annotations: { title: 'Start the browser', idempotent: true },
      consent: 'browser',
      input: z.strictObject({}),
      execute: async (_args, ctx) => json({ ok: true, ...(await (await engineOf()).start({ signal: ctx.signal })) }),
    }),
    defineCommand({
      name: 'browser.stop',
      description: 'Stops the dedicated browser and closes its tabs; the profile (cookies, logins) stays.',
      annotations: { title: 'Stop the browser', idempotent: true },
      consent: 'browser',
      input: z.strictObject({}),
      execute: async () => json({ ok: true, stopped: (await peek()?.stop()) ?? false }),
    }),
    defineCommand({
      name: 'browser.tabs',
      description: "Lists the dedicated browser's tabs: tabId, url, title, and which is current.",
      annotations: { title: 'List browser tabs', readOnly: true },
      consent: 'browser',
      input: z.strictObject({}),
      execute: async () => {
        const engine = peek();
        return json({ running: engine?.status().running ?? false, tabs: engine ? await engine.tabs() : [] });
      },
    }),
    defineCommand({
      name: 'browser.open',
      description: 'Opens a new tab on an http(s) URL (or about:blank), starting the browser when needed, and makes it current.',
      annotations: { title: 'Open a tab', openWorld: true },
      consent: 'browser',
      input: z.strictObject({ url: urlSchema.default('about:blank').describe('http(s) URL or about:blank.') }),
      execute: async ({ url }, ctx) => tabResult(await (await engineOf()).open(url, { signal: ctx.signal })),
    }),
    defineCommand({
      name: 'browser.close',
      description: 'Closes one tab of the dedicated browser.',
      annotations: { title: 'Close a tab', destructive: true },
      consent: 'browser',
      input: z.strictObject({ tabId: tabIdSchema }),
      execute: async ({ tabId }) => {
        const engine = peek();
        if (!engine) throw new CapabilityError('invalid_arguments', `No tab ${JSON.stringify(tabId)}: the browser is not running.`, { data: { reason: 'unknown_tab', tabId } });
        await engine.closeTab(tabId);
        return json({ ok: true, tabId });
      },
    }),
  ];
}

const uploadInput = z
  .strictObject({
    tabId: tab,
    ref: refSchema.optional().describe('Click this ref and answer the file chooser it opens.'),
    inputRef: refSchema.optional().describe('Set the files on this <input type=file> ref directly.'),
    selector: z.string().min(1).max(1000).optional().describe('Set the files on the first element this CSS selector matches (an <input type=file>).'),
    paths: z.array(z.string().min(1).max(4096)).min(1).max(MAX_BROWSER_UPLOAD_FILES).optional().describe('Files on this machine, inside the files roots (as fs.* reach them); each ≤ 10 MiB, all ≤ 16 MiB.'),
    files: z
      .array(z.strictObject({ name: z.string().min(1).max(1024), base64: z.string().max(MAX_BROWSER_UPLOAD_BASE64_CHARS), mimeType: z.string().min(1).max(255).optional() }))
      .min(1)
      .max(MAX_BROWSER_UPLOAD_FILES)
      .optional()
      .describe('The files themselves, as base64, instead of paths; same limits.'),
    timeoutMs,
  })
  .refine((value) => (value.paths === undefined) !== (value.files === undefined), { message: 'Give exactly one of `paths` and `files`.' })
  .refine((value) => value.ref === undefined || (value.inputRef === undefined && value.selector === undefined), { message: '`ref` cannot be combined with `inputRef` or `selector`.' })
  .refine((value) => value.inputRef === undefined || value.selector === undefined, { message: 'Give at most one of `inputRef` and `selector`.' });

function uploadCommand(engineOf: EngineOf, files: () => FilesOptions): CommandDefinition {
  return defineCommand({
    name: 'browser.upload',
    description:
      "Uploads files to a page: sets them on an <input type=file> (inputRef or selector), or clicks ref and answers the file chooser it opens, or (neither) arms the next file chooser. Paths must be inside the files roots; each file ≤ 10 MiB, all ≤ 16 MiB.",
    annotations: { title: 'Upload files to a page', destructive: true, openWorld: true },
    consent: 'browser',
    // Reading files off this machine is what fs.read does: paths need the files consent too.
    consentFor: (args) => (args.paths === undefined ? [] : ['files']),
    input: uploadInput,
    execute: async (args, ctx) => {
      // Every file is read and checked before the browser is touched: a refusal sends nothing.
      const payloads = args.paths ? await withErrnoFailures('browser.upload', (async () => readUploadPaths(await guardOf(files()), args.paths!, ctx.signal))()) : decodeUploadFiles(args.files!);
      const target = { ...(args.ref === undefined ? {} : { ref: args.ref }), ...(args.inputRef === undefined ? {} : { inputRef: args.inputRef }), ...(args.selector === undefined ? {} : { selector: args.selector }) };
      const done = await (await engineOf()).upload(args.tabId, target, payloads, { signal: ctx.signal, ...(args.timeoutMs ? { timeoutMs: args.timeoutMs } : {}) });
      return tabResult(done.tab, { mode: done.mode, files: payloads.map((file) => ({ name: file.name, bytes: file.buffer.byteLength })) });
    },
  });
}

function pageCommands(engineOf: EngineOf): CommandDefinition[] {
  return [
    defineCommand({
      name: 'browser.navigate',
      description: 'Loads an http(s) URL (or about:blank) in a tab (default the current one) and waits for the page to load.',
      annotations: { title: 'Navigate', openWorld: true },
      consent: 'browser',
      input: z.strictObject({ url: urlSchema.describe('http(s) URL or about:blank.'), tabId: tab, timeoutMs }),
      execute: async ({ url, tabId, timeoutMs: wait }, ctx) => tabResult(await (await engineOf()).navigate(tabId, url, { signal: ctx.signal, ...(wait ? { timeoutMs: wait } : {}) })),
    }),
    defineCommand({
      name: 'browser.snapshot',
      description:
        "An accessibility snapshot of a tab's page. format ai (default): text (roles, names, values) in which each element carries a ref ([ref=e12]) that browser.act, browser.upload and browser.screenshot take. format aria: OpenClaw's aria nodes (ref ax1…, role, name, value, description, depth), at most `limit`.",
      annotations: { title: 'Snapshot a page', readOnly: true },
      consent: 'browser',
      input: z.strictObject({
        tabId: tab,
        format: z.enum(['ai', 'aria']).default('ai').describe('ai: text with element refs; aria: the accessibility tree as nodes.'),
        maxChars: maxChars.describe('format ai: most characters returned.'),
        limit: z.number().int().min(1).max(MAX_ARIA_NODES).default(DEFAULT_ARIA_NODES).describe('format aria: most nodes returned.'),
      }),
      execute: async ({ tabId, format, maxChars: max, limit }, ctx) => {
        const engine = await engineOf();
        if (format === 'aria') {
          const aria = await engine.ariaSnapshot(tabId, { signal: ctx.signal, limit });
          const text = aria.nodes.map((node) => `${'  '.repeat(node.depth)}- ${node.role}${node.name ? ` ${JSON.stringify(node.name)}` : ''}${node.value ? `: ${JSON.stringify(node.value)}` : ''} [${node.ref}]`).join('\n');
          return { ok: true, content: [{ type: 'text', text }], structured: { ok: true, format: 'aria', ...aria } };
        }
        const snap = await engine.snapshot(tabId, { signal: ctx.signal, maxChars: max });
        return { ok: true, content: [{ type: 'text', text: snap.snapshot }], structured: { ok: true, format: 'ai', ...snap } };
      },
    }),
    defineCommand({
      name: 'browser.act',
      description: 'Acts on an element by its snapshot ref: click, type (fill, optionally submit), select options, press a key, hover.',
      annotations: { title: 'Act on a page', destructive: true, openWorld: true },
      consent: 'browser',
      input: z.strictObject({ tabId: tab, timeoutMs, action: actSchema }),
      execute: async ({ tabId, timeoutMs: wait, action }, ctx) => tabResult(await (await engineOf()).act(tabId, action, { signal: ctx.signal, ...(wait ? { timeoutMs: wait } : {}) }), { kind: action.kind }),
    }),
    defineCommand({
      name: 'browser.screenshot',
      description: 'A screenshot of a tab (viewport, full page, or one element by ref) as PNG or JPEG.',
      annotations: { title: 'Screenshot a page', readOnly: true },
      consent: 'browser',
      input: z.strictObject({
        tabId: tab,
        fullPage: z.boolean().optional().describe('The whole page instead of the viewport.'),
        ref: refSchema.optional(),
        format: z.enum(['png', 'jpeg']).default('png'),
        quality: z.number().int().min(1).max(100).optional().describe('JPEG quality 1..100.'),
      }),
      execute: async ({ tabId, fullPage, ref, format, quality }, ctx) => {
        const shot = await (await engineOf()).screenshot(tabId, { signal: ctx.signal, format, ...(fullPage === undefined ? {} : { fullPage }), ...(ref === undefined ? {} : { ref }), ...(quality === undefined ? {} : { quality }) });
        const base64 = toBoundedBase64(shot.data, 'The screenshot', 'take the viewport or one element instead of the full page, or JPEG');
        return imageResult({ format, base64, tabId: shot.tab.tabId, url: shot.tab.url }, format === 'png' ? 'image/png' : 'image/jpeg');
      },
    }),
    defineCommand({
      name: 'browser.text',
      description: "The visible text of a tab's page (or of the first element a CSS selector matches), cut at maxChars.",
      annotations: { title: 'Read page text', readOnly: true },
      consent: 'browser',
      input: z.strictObject({ tabId: tab, selector: z.string().min(1).max(1000).optional().describe('CSS selector; default the whole body.'), maxChars }),
      execute: async ({ tabId, selector, maxChars: max }, ctx) => {
        const read = await (await engineOf()).text(tabId, { signal: ctx.signal, maxChars: max, ...(selector === undefined ? {} : { selector }) });
        const structured = { ok: true, tabId: read.tab.tabId, url: read.tab.url, text: read.text, truncated: read.truncated };
        return { ok: true, content: [{ type: 'text', text: read.text }], structured };
      },
    }),
  ];
}

/**
 * The `browser` capability: capnode's own Chromium ("agent in Chrome") on a persistent profile in
 * capnode's config directory. `browser.status|start|stop|tabs|open|navigate|snapshot|act|upload|screenshot|text|close`,
 * behind the `browser` consent (status excepted). playwright-core and Chromium load on first use.
 */
export function createBrowserCapability(options: BrowserCapabilityOptions): BrowserCapability {
  const env = options.env ?? process.env;
  let engine: BrowserEngine | undefined;
  let creating: Promise<BrowserEngine> | undefined;
  const engineOf: EngineOf = () => {
    if (engine) return Promise.resolve(engine);
    creating ??= (async () => {
      const executablePath = options.executablePath ?? findChromiumExecutable(env);
      if (!executablePath) throw new CapabilityError('unavailable', `unavailable here: install ${INSTALL_HINT}`);
      const { createBrowserEngine } = await import('./internal/browserEngine.js');
      engine = createBrowserEngine({ profileDir: options.profileDir, executablePath, headless: options.headless ?? defaultHeadless(env), env, ...(options.actionTimeoutMs ? { actionTimeoutMs: options.actionTimeoutMs } : {}) });
      return engine;
    })().finally(() => (creating = undefined));
    return creating;
  };
  const describe = () => ({ profileDir: options.profileDir, headless: options.headless ?? defaultHeadless(env) });
  const availability = () => probeBrowser({ ...(options.executablePath ? { executablePath: options.executablePath } : {}), env });
  const files = options.files ?? (() => ({}));
  const commands = [...lifecycleCommands(engineOf, () => engine, describe), ...pageCommands(engineOf), uploadCommand(engineOf, files)].map((command) => ({ ...command, availability }));
  const close = async () => {
    await (engine ?? (await creating?.catch(() => undefined)))?.close();
  };
  return { ...defineCapability({ category: 'browser', commands }), engine: engineOf, close, [Symbol.asyncDispose]: close };
}

/** Settings section `pluginSettings.browser`. */
export const browserSettingsSchema = z.object({
  headless: z.boolean().optional(),
  executablePath: z.string().min(1).optional(),
  actionTimeoutMs: z.number().int().min(1000).max(120_000).optional(),
  /** Profiles a gateway's `browser.proxy` may name (read by the host's browser-control part); empty allows all. */
  allowProfiles: z.array(z.string().min(1).max(128)).max(32).optional(),
});

/**
 * The browser plugin of the pack: profile in `<config>/plugins-data/browser/profile`; stops Chromium when the
 * host closes. `filesSettings` gives the files plugin's settings (`pluginSettings.files`): `browser.upload`
 * reads from the same roots as `fs.*`, capnode's config directory excluded.
 */
export function createBrowserPlugin(filesSettings?: () => Readonly<Record<string, unknown>>) {
  return definePlugin((context: PluginContext): Capability => {
    const parsed = browserSettingsSchema.safeParse(context.settings);
    if (!parsed.success) context.log('warning', `pluginSettings.browser ignored: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    const settings: z.output<typeof browserSettingsSchema> = parsed.success ? parsed.data : {};
    // Read at each upload; invalid settings are logged once per value, not on every call.
    let warnedFor: string | undefined;
    const files = (): FilesOptions => {
      const current = filesSettings?.() ?? {};
      return filesOptionsFromSettings(current, context.configDir, (message) => {
        const key = JSON.stringify(current);
        if (key === warnedFor) return;
        warnedFor = key;
        context.log('warning', message);
      });
    };
    const capability = createBrowserCapability({
      profileDir: join(context.dataDir, 'profile'),
      files,
      ...(settings.headless === undefined ? {} : { headless: settings.headless }),
      ...(settings.executablePath === undefined ? {} : { executablePath: settings.executablePath }),
      ...(settings.actionTimeoutMs === undefined ? {} : { actionTimeoutMs: settings.actionTimeoutMs }),
    });
    context.signal.addEventListener('abort', () => void capability.close(), { once: true });
    return capability;
  });
}

/** The browser plugin with the files default roots (the user's home); the host wires {@link createBrowserPlugin} to its settings. */
export const browserPlugin = createBrowserPlugin();
