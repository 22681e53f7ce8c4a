/**
 * The dedicated browser: the system's Chromium driven through playwright-core, on a persistent
 * profile of its own. Loaded on first use only (playwright-core is imported here, dynamically).
 */
import { mkdirSync } from 'node:fs';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { CapabilityError } from '../../errors.js';
import { checkBrowserUrl, cutText, refsOf, type BrowserAction } from './browserArgs.js';
import type { UploadPayload } from './browserUpload.js';

/** Where the browser runs from and how. */
export interface BrowserEngineOptions {
  /** The profile directory (created when missing); never the user's everyday profile. */
  readonly profileDir: string;
  readonly executablePath: string;
  readonly headless: boolean;
  /** Environment Chromium runs with (DISPLAY, XAUTHORITY). Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Default wait for one navigation or action, in ms. */
  readonly actionTimeoutMs?: number;
}

/** One tab as the browser commands report it. */
export interface BrowserTabInfo {
  readonly tabId: string;
  readonly url: string;
  readonly title: string;
  readonly active: boolean;
}

export interface BrowserSnapshot {
  readonly tabId: string;
  readonly url: string;
  readonly title: string;
  readonly snapshot: string;
  readonly refs: number;
  readonly truncated: boolean;
}

/** One node of an aria snapshot, in OpenClaw's shape (`/snapshot?format=aria`): depth-first, refs `ax1`, `ax2`, …. */
export interface BrowserAriaNode {
  readonly ref: string;
  readonly role: string;
  readonly name: string;
  readonly value?: string;
  readonly description?: string;
  readonly backendDOMNodeId?: number;
  readonly depth: number;
}

export interface BrowserAriaSnapshot {
  readonly tabId: string;
  readonly url: string;
  readonly title: string;
  readonly nodes: readonly BrowserAriaNode[];
  readonly truncated: boolean;
}

/** Where `upload` puts its files: on an `<input type=file>` (by ref or CSS selector), through the chooser a ref's click opens, or the next chooser. */
export interface BrowserUploadTarget {
  /** Click this ref and answer the file chooser it opens. */
  readonly ref?: string;
  /** Set the files on this `<input type=file>` ref directly. */
  readonly inputRef?: string;
  /** Set the files on the first element this CSS selector matches. */
  readonly selector?: string;
}

export interface BrowserEngineStatus {
  readonly running: boolean;
  readonly headless: boolean;
  readonly profileDir: string;
  readonly executablePath: string;
  readonly tabs: number;
}

interface Call {
  readonly signal?: AbortSignal;
}

/** The browser behind `browser.*` and the browser-control service. */
export interface BrowserEngine extends AsyncDisposable {
  status(): BrowserEngineStatus;
  start(options?: Call): Promise<BrowserEngineStatus>;
  stop(): Promise<boolean>;
  tabs(options?: Call): Promise<BrowserTabInfo[]>;
  open(url: string, options?: Call): Promise<BrowserTabInfo>;
  navigate(tabId: string | undefined, url: string, options?: Call & { readonly timeoutMs?: number }): Promise<BrowserTabInfo>;
  snapshot(tabId: string | undefined, options: Call & { readonly maxChars: number }): Promise<BrowserSnapshot>;
  /** The accessibility tree as OpenClaw's aria nodes (Chromium's own tree, through CDP), at most `limit` nodes. */
  ariaSnapshot(tabId: string | undefined, options: Call & { readonly limit: number }): Promise<BrowserAriaSnapshot>;
  /** Hands `files` to the page (see {@link BrowserUploadTarget}); `armed` when it waits for the next chooser. */
  upload(tabId: string | undefined, target: BrowserUploadTarget, files: readonly UploadPayload[], options?: Call & { readonly timeoutMs?: number }): Promise<{ readonly tab: BrowserTabInfo; readonly mode: 'input' | 'chooser' | 'armed' }>;
  act(tabId: string | undefined, action: BrowserAction, options?: Call & { readonly timeoutMs?: number }): Promise<BrowserTabInfo>;
  screenshot(tabId: string | undefined, options: Call & { readonly fullPage?: boolean; readonly ref?: string; readonly format: 'png' | 'jpeg'; readonly quality?: number }): Promise<{ readonly tab: BrowserTabInfo; readonly data: Buffer }>;
  text(tabId: string | undefined, options: Call & { readonly selector?: string; readonly maxChars: number }): Promise<{ readonly tab: BrowserTabInfo; readonly text: string; readonly truncated: boolean }>;
  closeTab(tabId: string): Promise<void>;
  close(): Promise<void>;
}

/** Flags for an agent's browser: no first-run UI, no background traffic of its own. */
const CHROMIUM_ARGS = ['--no-first-run', '--no-default-browser-check', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-features=Translate,MediaRouter'];

function unknownTab(tabId: string): CapabilityError {
  return new CapabilityError('invalid_arguments', `No tab ${JSON.stringify(tabId)}: see browser.tabs.`, { data: { reason: 'unknown_tab', tabId } });
}

/** Turns a Playwright failure into a capability failure without its internals (call log, stack). */
function actionFailure(error: unknown, what: string, signal?: AbortSignal): CapabilityError {
  if (error instanceof CapabilityError) return error;
  if (signal?.aborted) return new CapabilityError('cancelled', `${what} was cancelled.`);
  const name = (error as { name?: unknown })?.name;
  if (name === 'TimeoutError') return new CapabilityError('timeout', `${what} timed out.`);
  const first = String((error as { message?: unknown })?.message ?? error).split('\n')[0]!.replace(/^[a-zA-Z.]+: /, '').slice(0, 300);
  return new CapabilityError('failed', `${what} failed: ${first}`);
}

/** The tabs of one browser: ids handed out per page, the current tab, and each page's latest snapshot refs. */
interface TabRegistry {
  readonly pages: Map<string, Page>;
  active: string | undefined;
  adopt(page: Page): string;
  idOf(page: Page): string;
  locate(page: Page, ref: string): Locator;
  remember(page: Page, found: Set<string>): void;
  clear(): void;
}

function createTabRegistry(): TabRegistry {
  const ids = new WeakMap<Page, string>();
  const refs = new WeakMap<Page, Set<string>>();
  let counter = 0;
  const registry: TabRegistry = {
    pages: new Map(),
    active: undefined,
    adopt(page) {
      const known = ids.get(page);
      if (known) return known;
      const tabId = `t${++counter}`;
      ids.set(page, tabId);
      registry.pages.set(tabId, page);
      registry.active = tabId;
      page.on('close', () => {
        registry.pages.delete(tabId);
        if (registry.active === tabId) registry.active = [...registry.pages.keys()].at(-1);
      });
      // Refs name elements of one document: a new document makes every earlier ref unknown.
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame()) refs.delete(page);
      });
      return tabId;
    },
    idOf: (page) => ids.get(page) ?? registry.adopt(page),
    locate(page, ref) {
      if (!refs.get(page)?.has(ref)) {
        throw new CapabilityError('invalid_arguments', `Unknown ref ${JSON.stringify(ref)}: take a new browser.snapshot of this tab and use one of its refs.`, { data: { reason: 'unknown_ref', ref } });
      }
      return page.getByRef(ref);
    },
    remember: (page, found) => void refs.set(page, found),
    clear() {
      registry.pages.clear();
      registry.active = undefined;
    },
  };
  return registry;
}

/** Launches Chromium on the persistent profile; its pages join `registry`. */
async function launchContext(options: BrowserEngineOptions, registry: TabRegistry, actionTimeoutMs: number): Promise<BrowserContext> {
  const { chromium } = await import('playwright-core');
  mkdirSync(options.profileDir, { recursive: true, mode: 0o700 });
  let launched: BrowserContext;
  try {
    launched = await chromium.launchPersistentContext(options.profileDir, {
      executablePath: options.executablePath,
      headless: options.headless,
      args: CHROMIUM_ARGS,
      acceptDownloads: false,
      env: options.env ?? process.env,
      timeout: 30_000,
      viewport: options.headless ? { width: 1280, height: 800 } : null,
    });
  } catch (error) {
    const message = String((error as { message?: unknown })?.message ?? error);
    if (/ProcessSingleton|profile.*in use|SingletonLock/i.test(message)) throw new CapabilityError('busy', 'The browser profile is in use by another capnode or Chromium process.');
    throw new CapabilityError('unavailable', `Chromium did not start: ${message.split('\n')[0]!.slice(0, 300)}`);
  }
  launched.setDefaultTimeout(actionTimeoutMs);
  launched.on('page', (page) => void registry.adopt(page));
  for (const page of launched.pages()) registry.adopt(page);
  return launched;
}

/** Runs one `browser.act` action on `page` (its ref already resolved to `target`). */
async function performAction(page: Page, target: Locator | undefined, action: BrowserAction, timeout: number, signal: AbortSignal | undefined): Promise<void> {
  const common = { timeout, ...(signal ? { signal } : {}) };
  switch (action.kind) {
    case 'click': {
      const click = { ...common, ...(action.button ? { button: action.button } : {}) };
      await (action.doubleClick ? target!.dblclick(click) : target!.click(click));
      return;
    }
    case 'type':
      await (action.slowly ? target!.pressSequentially(action.text, common) : target!.fill(action.text, common));
      if (action.submit) await target!.press('Enter', common);
      return;
    case 'select':
      await target!.selectOption(action.values, common);
      return;
    case 'press':
      await (target ? target.press(action.key, common) : page.keyboard.press(action.key));
      return;
    case 'hover':
      await target!.hover(common);
      return;
  }
}

interface AxValue {
  readonly value?: unknown;
}
interface AxNode {
  readonly nodeId?: string;
  readonly childIds?: readonly string[];
  readonly role?: AxValue;
  readonly name?: AxValue;
  readonly value?: AxValue;
  readonly description?: AxValue;
  readonly backendDOMNodeId?: number;
}

function axText(value: AxValue | undefined): string {
  const raw = value?.value;
  return typeof raw === 'string' ? raw : typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : '';
}

/** Chromium's full AX tree as OpenClaw formats it: depth-first from the root, `ax<n>` refs, at most `limit` nodes. */
export function formatAriaNodes(nodes: readonly AxNode[], limit: number): { nodes: BrowserAriaNode[]; truncated: boolean } {
  const byId = new Map<string, AxNode>();
  const referenced = new Set<string>();
  for (const node of nodes) {
    if (node.nodeId) byId.set(node.nodeId, node);
    for (const child of node.childIds ?? []) referenced.add(child);
  }
  const root = nodes.find((node) => node.nodeId && !referenced.has(node.nodeId)) ?? nodes[0];
  const out: BrowserAriaNode[] = [];
  if (!root?.nodeId) return { nodes: out, truncated: false };
  const stack = [{ id: root.nodeId, depth: 0 }];
  while (stack.length > 0 && out.length < limit) {
    const { id, depth } = stack.pop()!;
    const node = byId.get(id);
    if (!node) continue;
    const value = axText(node.value);
    const description = axText(node.description);
    out.push({
      ref: `ax${out.length + 1}`,
      role: axText(node.role) || 'unknown',
      name: axText(node.name),
      ...(value ? { value } : {}),
      ...(description ? { description } : {}),
      ...(typeof node.backendDOMNodeId === 'number' ? { backendDOMNodeId: node.backendDOMNodeId } : {}),
      depth,
    });
    const children = node.childIds ?? [];
    for (let index = children.length - 1; index >= 0; index -= 1) if (byId.has(children[index]!)) stack.push({ id: children[index]!, depth: depth + 1 });
  }
  return { nodes: out, truncated: stack.length > 0 };
}

/** Puts `files` where `target` says; an armed chooser waits in the background until `timeout`. */
async function uploadTo(page: Page, locate: (ref: string) => Locator, target: BrowserUploadTarget, files: readonly UploadPayload[], timeout: number, arm: (page: Page, files: UploadPayload[], timeout: number) => void): Promise<'input' | 'chooser' | 'armed'> {
  const payloads = files.map((file) => ({ name: file.name, mimeType: file.mimeType, buffer: file.buffer }));
  if (target.inputRef !== undefined || target.selector !== undefined) {
    const input = target.inputRef !== undefined ? locate(target.inputRef) : page.locator(`css=${target.selector!}`).first();
    await input.setInputFiles(payloads, { timeout });
    return 'input';
  }
  if (target.ref !== undefined) {
    const element = locate(target.ref);
    const [chooser] = await Promise.all([page.waitForEvent('filechooser', { timeout }), element.click({ timeout })]);
    await chooser.setFiles(payloads, { timeout });
    return 'chooser';
  }
  arm(page, payloads, timeout);
  return 'armed';
}

/**
 * Arms pages' next file chooser with files, in the background until `timeout`; only the latest arming of
 * a page answers (an older one still waiting does nothing).
 */
function createChooserArming(): (page: Page, files: UploadPayload[], timeout: number) => void {
  const armed = new WeakMap<Page, number>();
  let armings = 0;
  return (page, files, timeout) => {
    const mine = ++armings;
    armed.set(page, mine);
    void page
      .waitForEvent('filechooser', { timeout })
      .then(async (chooser) => {
        if (armed.get(page) === mine) await chooser.setFiles(files, { timeout });
      })
      .catch(() => undefined)
      .finally(() => {
        if (armed.get(page) === mine) armed.delete(page);
      });
  };
}

/** Chromium's full accessibility tree of `page` through a CDP session of its own, formatted as OpenClaw's aria nodes. */
async function ariaNodesOf(page: Page, limit: number): Promise<{ nodes: BrowserAriaNode[]; truncated: boolean }> {
  const session = await page.context().newCDPSession(page);
  try {
    await session.send('Accessibility.enable').catch(() => undefined);
    const raw = (await session.send('Accessibility.getFullAXTree')) as { nodes?: AxNode[] };
    return formatAriaNodes(Array.isArray(raw.nodes) ? raw.nodes : [], limit);
  } finally {
    await session.detach().catch(() => undefined);
  }
}

/** A screenshot of `element`, or of the page (its viewport, or all of it). */
function shoot(page: Page, element: Locator | undefined, call: { readonly fullPage?: boolean; readonly format: 'png' | 'jpeg'; readonly quality?: number }, timeout: number): Promise<Buffer> {
  const shot = { type: call.format, timeout, ...(call.format === 'jpeg' && call.quality !== undefined ? { quality: call.quality } : {}) };
  return element ? element.screenshot(shot) : page.screenshot({ ...shot, fullPage: call.fullPage ?? false });
}

/** Creates the engine; Chromium starts on the first call that needs it. */
export function createBrowserEngine(options: BrowserEngineOptions): BrowserEngine {
  const actionTimeoutMs = options.actionTimeoutMs ?? 15_000;
  const tabs = createTabRegistry();
  let context: BrowserContext | undefined;
  let starting: Promise<BrowserContext> | undefined;
  /** The blank tab a fresh launch opens with, until the first `open` uses it. */
  let launchTab: Page | undefined;

  const ensure = async (): Promise<BrowserContext> => {
    if (context) return context;
    starting ??= launchContext(options, tabs, actionTimeoutMs)
      .then((launched) => {
        launched.on('close', () => {
          if (context === launched) context = undefined;
          tabs.clear();
        });
        const initial = launched.pages();
        launchTab = initial.length === 1 && initial[0]!.url() === 'about:blank' ? initial[0] : undefined;
        return launched;
      })
      .finally(() => (starting = undefined));
    context = await starting;
    return context;
  };

  const info = async (page: Page): Promise<BrowserTabInfo> => {
    const tabId = tabs.idOf(page);
    const title = await page.title().catch(() => '');
    return { tabId, url: page.url(), title, active: tabId === tabs.active };
  };

  /** The tab `tabId` names, or the current one; starts the browser (with one blank tab) when needed. */
  const pageOf = async (tabId: string | undefined): Promise<Page> => {
    if (tabId !== undefined) {
      const page = tabs.pages.get(tabId);
      if (!page) throw unknownTab(tabId);
      return page;
    }
    const browser = await ensure();
    const current = tabs.active === undefined ? undefined : tabs.pages.get(tabs.active);
    if (current) return current;
    const page = await browser.newPage();
    tabs.adopt(page);
    return page;
  };

  const arm = createChooserArming();

  const goto = async (page: Page, url: string, signal: AbortSignal | undefined, timeout: number) => {
    const target = checkBrowserUrl(url);
    try {
      await page.goto(target, { timeout, waitUntil: 'load' });
    } catch (error) {
      throw actionFailure(error, `Opening ${target}`, signal);
    }
  };

  const engine: BrowserEngine = {
    status: () => ({ running: context !== undefined, headless: options.headless, profileDir: options.profileDir, executablePath: options.executablePath, tabs: tabs.pages.size }),
    async start() {
      await ensure();
      return engine.status();
    },
    async stop() {
      if (!context && !starting) return false;
      const closing = context ?? (await starting?.catch(() => undefined));
      context = undefined;
      await closing?.close().catch(() => undefined);
      return true;
    },
    tabs: async () => (context ? Promise.all([...tabs.pages.values()].map(info)) : []),
    async open(url, call = {}) {
      const target = checkBrowserUrl(url);
      const browser = await ensure();
      // A fresh launch starts with one blank tab: the first open uses it.
      const blank = launchTab && !launchTab.isClosed() && launchTab.url() === 'about:blank' ? launchTab : undefined;
      launchTab = undefined;
      const page = blank ?? (await browser.newPage());
      tabs.active = tabs.adopt(page);
      if (target !== 'about:blank') await goto(page, target, call.signal, actionTimeoutMs);
      return info(page);
    },
    async navigate(tabId, url, call = {}) {
      checkBrowserUrl(url);
      const page = await pageOf(tabId);
      tabs.active = tabs.idOf(page);
      await goto(page, url, call.signal, call.timeoutMs ?? actionTimeoutMs);
      return info(page);
    },
    async snapshot(tabId, call) {
      const page = await pageOf(tabId);
      const text = await page.ariaSnapshot({ mode: 'ai', timeout: actionTimeoutMs, ...(call.signal ? { signal: call.signal } : {}) }).catch((error: unknown) => {
        throw actionFailure(error, 'The snapshot', call.signal);
      });
      const found = refsOf(text);
      tabs.remember(page, found);
      const cut = cutText(text, call.maxChars);
      const tab = await info(page);
      return { tabId: tab.tabId, url: tab.url, title: tab.title, snapshot: cut.text, refs: found.size, truncated: cut.truncated };
    },
    async ariaSnapshot(tabId, call) {
      const page = await pageOf(tabId);
      const formatted = await ariaNodesOf(page, call.limit).catch((error: unknown) => {
        throw actionFailure(error, 'The aria snapshot', call.signal);
      });
      const tab = await info(page);
      return { tabId: tab.tabId, url: tab.url, title: tab.title, ...formatted };
    },
    async upload(tabId, target, files, call = {}) {
      const page = await pageOf(tabId);
      const mode = await uploadTo(page, (ref) => tabs.locate(page, ref), target, files, call.timeoutMs ?? actionTimeoutMs, arm).catch((error: unknown) => {
        throw actionFailure(error, 'The upload', call.signal);
      });
      return { tab: await info(page), mode };
    },
    async act(tabId, action, call = {}) {
      const page = await pageOf(tabId);
      const ref = 'ref' in action ? action.ref : undefined;
      const target = ref === undefined ? undefined : tabs.locate(page, ref);
      await performAction(page, target, action, call.timeoutMs ?? actionTimeoutMs, call.signal).catch((error: unknown) => {
        throw actionFailure(error, `${action.kind}${ref ? ` on ${ref}` : ''}`, call.signal);
      });
      return info(page);
    },
    async screenshot(tabId, call) {
      const page = await pageOf(tabId);
      const element = call.ref === undefined ? undefined : tabs.locate(page, call.ref);
      const data = await shoot(page, element, call, actionTimeoutMs).catch((error: unknown) => {
        throw actionFailure(error, 'The screenshot', call.signal);
      });
      return { tab: await info(page), data };
    },
    async text(tabId, call) {
      const page = await pageOf(tabId);
      const root = call.selector === undefined ? page.locator('body') : page.locator(`css=${call.selector}`).first();
      const text = await root.innerText({ timeout: actionTimeoutMs }).catch((error: unknown) => {
        throw actionFailure(error, 'Reading the page text', call.signal);
      });
      return { tab: await info(page), ...cutText(text, call.maxChars) };
    },
    async closeTab(tabId) {
      const page = tabs.pages.get(tabId);
      if (!page) throw unknownTab(tabId);
      await page.close();
    },
    close: async () => void (await engine.stop()),
    [Symbol.asyncDispose]: () => engine.close(),
  };
  return engine;
}
