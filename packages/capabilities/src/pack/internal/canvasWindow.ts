import { waitFor } from '@capnode/toolkit';
import { launchCanvasBrowser, type CanvasBrowser, type CanvasPlacement } from './canvasBrowser.js';
import { CdpError } from './cdpPipe.js';

export type { CanvasPlacement } from './canvasBrowser.js';

/** What the canvas shows: a page by URL, or HTML given inline. */
export type CanvasContent = { readonly kind: 'url'; readonly url: string } | { readonly kind: 'html'; readonly html: string };

/**
 * Decides each request the window makes while it shows a remote caller's content (the page, its
 * redirects, frames and subresources); `undefined` lets everything through (a local caller's content).
 */
export type CanvasRequestGuard = (url: URL) => Promise<boolean>;

/** How a navigation ended: loaded, or the browser's error (`net::ERR_BLOCKED_BY_CLIENT` when the guard refused it). */
export interface CanvasLoad {
  readonly url: string;
  readonly errorText?: string;
}

/** The page's value of a `canvas.eval`, or the exception it threw. */
export type CanvasEvalOutcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly exception: string };

export interface CanvasScreenshotRequest {
  readonly format: 'png' | 'jpeg';
  /** 0..100, JPEG only. */
  readonly quality: number;
  readonly maxWidth?: number | undefined;
}

export interface CanvasScreenshot {
  readonly data: Buffer;
  readonly width: number;
  readonly height: number;
}

/** Options of {@link createCanvasWindow}. */
export interface CanvasWindowOptions {
  readonly executable: string;
  readonly profileDir: string;
  /** Read at each launch (DISPLAY may change between calls in tests). */
  readonly env: () => NodeJS.ProcessEnv;
  /** How long a page may take to fire its load event before the call returns anyway. Default 15 000 ms. */
  readonly loadTimeoutMs?: number;
}

type Op = { readonly signal: AbortSignal };

/** The canvas: one Chromium app window, started on first use and gone when hidden or closed. */
export interface CanvasWindow extends AsyncDisposable {
  readonly isOpen: boolean;
  /** True while what the window shows was opened under a request guard (a remote caller's), or nothing is shown. */
  readonly guarded: boolean;
  /** Opens the window if needed (at `placement`), applies `placement`, and shows `content` (else what it showed last). */
  present(content: CanvasContent | undefined, placement: CanvasPlacement | undefined, guard: CanvasRequestGuard | undefined, op: Op): Promise<CanvasLoad>;
  evaluate(expression: string, op: Op): Promise<CanvasEvalOutcome>;
  screenshot(request: CanvasScreenshotRequest, op: Op): Promise<CanvasScreenshot>;
  /** Closes the window (the browser with it); `present` opens it again with the last content. */
  hide(): Promise<void>;
  close(): Promise<void>;
}

const BLANK: CanvasContent = { kind: 'html', html: '' };

/** Width and height from a PNG's IHDR or a JPEG's first SOF marker. */
export function imageSize(data: Buffer): { width: number; height: number } {
  if (data.length >= 24 && data.toString('latin1', 1, 4) === 'PNG') return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
  let offset = 2;
  while (offset + 9 < data.length && data[offset] === 0xff) {
    const marker = data[offset + 1]!;
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { width: data.readUInt16BE(offset + 7), height: data.readUInt16BE(offset + 5) };
    }
    offset += 2 + data.readUInt16BE(offset + 2);
  }
  return { width: 0, height: 0 };
}

class Window implements CanvasWindow {
  private browser: CanvasBrowser | undefined;
  private last: CanvasContent | undefined;
  private guard: CanvasRequestGuard | undefined;
  private intercepting = false;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly options: CanvasWindowOptions) {}

  get isOpen(): boolean {
    return this.browser?.running === true;
  }

  get guarded(): boolean {
    return this.guard !== undefined || this.last === undefined;
  }

  /** One operation at a time: a present does not interleave with an eval. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async open(placement: CanvasPlacement | undefined, signal: AbortSignal): Promise<CanvasBrowser> {
    if (this.closed) throw new CdpError('closed', 'The canvas is closed.');
    if (this.browser?.running) return this.browser;
    this.intercepting = false;
    const browser = await launchCanvasBrowser({ executable: this.options.executable, profileDir: this.options.profileDir, env: this.options.env(), placement, signal });
    browser.cdp.on('Fetch.requestPaused', (params, sessionId) => {
      if (sessionId === undefined) void this.decide(browser, params);
    });
    this.browser = browser;
    return browser;
  }

  private async decide(browser: CanvasBrowser, params: Record<string, unknown>): Promise<void> {
    const requestId = params.requestId as string;
    const url = (params.request as { url?: string } | undefined)?.url ?? '';
    const guard = this.guard;
    let allowed = true;
    if (guard) allowed = URL.canParse(url) ? await guard(new URL(url)).catch(() => false) : false;
    const command = allowed ? browser.cdp.send('Fetch.continueRequest', { requestId }) : browser.cdp.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' });
    await command.catch(() => undefined);
  }

  /** Intercepts every request of the browser (frames of other sites included) while a guard is set. */
  private async applyGuard(browser: CanvasBrowser, guard: CanvasRequestGuard | undefined, signal: AbortSignal): Promise<void> {
    this.guard = guard;
    if (guard && !this.intercepting) await browser.cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*' }] }, { signal });
    else if (!guard && this.intercepting) await browser.cdp.send('Fetch.disable', {}, { signal });
    this.intercepting = guard !== undefined;
  }

  private async place(browser: CanvasBrowser, placement: CanvasPlacement, signal: AbortSignal): Promise<void> {
    const bounds: Record<string, number> = {};
    if (placement.x !== undefined && placement.x !== -1) bounds.left = placement.x;
    if (placement.y !== undefined && placement.y !== -1) bounds.top = placement.y;
    if (placement.width !== undefined) bounds.width = placement.width;
    if (placement.height !== undefined) bounds.height = placement.height;
    if (Object.keys(bounds).length === 0) return;
    await browser.cdp.send('Browser.setWindowBounds', { windowId: browser.windowId, bounds }, { signal });
  }

  private async load(browser: CanvasBrowser, content: CanvasContent, signal: AbortSignal): Promise<CanvasLoad> {
    const { cdp, sessionId } = browser;
    let stop: () => void = () => undefined;
    const loaded = new Promise<void>((resolve) => {
      stop = cdp.on('Page.loadEventFired', (_params, from) => {
        if (from === sessionId) resolve();
      });
    });
    try {
      if (content.kind === 'url') {
        const result = await cdp.send<{ errorText?: string }>('Page.navigate', { url: content.url }, { sessionId, signal });
        if (result.errorText) return { url: content.url, errorText: result.errorText };
      } else {
        // A fresh opaque origin first, so the HTML never runs inside the previous page's origin.
        await cdp.send('Page.navigate', { url: 'about:blank' }, { sessionId, signal });
        const { frameTree } = await cdp.send<{ frameTree: { frame: { id: string } } }>('Page.getFrameTree', {}, { sessionId, signal });
        await cdp.send('Page.setDocumentContent', { frameId: frameTree.frame.id, html: content.html }, { sessionId, signal });
      }
      // A page still loading is shown anyway; the call does not wait for it forever.
      await waitFor(loaded, { timeoutMs: this.options.loadTimeoutMs ?? 15_000, signal }).catch((error: unknown) => {
        if (signal.aborted) throw error;
      });
      return { url: content.kind === 'url' ? content.url : 'about:blank' };
    } finally {
      stop();
    }
  }

  present(content: CanvasContent | undefined, placement: CanvasPlacement | undefined, guard: CanvasRequestGuard | undefined, { signal }: Op): Promise<CanvasLoad> {
    return this.serial(async () => {
      const wasOpen = this.isOpen;
      const browser = await this.open(placement, signal);
      if (wasOpen && placement) await this.place(browser, placement, signal);
      // A remote caller never gets a local caller's page shown again (it could read it): it gets a blank one.
      const localPage = this.last !== undefined && this.guard === undefined;
      const next = content ?? (guard && localPage ? BLANK : this.last);
      // Shown again, content keeps the guard it was first shown under, and a remote caller adds its own.
      await this.applyGuard(browser, content ? guard : (guard ?? this.guard), signal);
      if (next === undefined) return { url: 'about:blank' };
      this.last = next === BLANK ? undefined : next;
      return this.load(browser, next, signal);
    });
  }

  private openBrowser(): CanvasBrowser {
    if (!this.browser?.running) throw new CdpError('closed', 'The canvas is not shown; call canvas.present first.');
    return this.browser;
  }

  evaluate(expression: string, { signal }: Op): Promise<CanvasEvalOutcome> {
    return this.serial(async () => {
      const { cdp, sessionId } = this.openBrowser();
      type Evaluated = { result: { value?: unknown; unserializableValue?: string; type: string }; exceptionDetails?: { text?: string; exception?: { description?: string } } };
      const evaluated = await cdp.send<Evaluated>('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true, userGesture: true }, { sessionId, signal }).catch((error: unknown) => {
        // A script still running (a busy loop) would block every later call: stop it.
        if (signal.aborted) void cdp.send('Runtime.terminateExecution', {}, { sessionId }).catch(() => undefined);
        throw error;
      });
      if (evaluated.exceptionDetails) {
        const details = evaluated.exceptionDetails;
        return { ok: false, exception: details.exception?.description ?? details.text ?? 'the script threw' };
      }
      const { result } = evaluated;
      return { ok: true, value: result.unserializableValue ?? result.value };
    });
  }

  screenshot(request: CanvasScreenshotRequest, { signal }: Op): Promise<CanvasScreenshot> {
    return this.serial(async () => {
      const { cdp, sessionId } = this.openBrowser();
      type Metrics = { cssLayoutViewport: { clientWidth: number; clientHeight: number } };
      const { cssLayoutViewport: viewport } = await cdp.send<Metrics>('Page.getLayoutMetrics', {}, { sessionId, signal });
      const scale = request.maxWidth !== undefined && request.maxWidth < viewport.clientWidth ? request.maxWidth / viewport.clientWidth : 1;
      const params: Record<string, unknown> = {
        format: request.format,
        ...(request.format === 'jpeg' ? { quality: Math.round(request.quality) } : {}),
        ...(scale < 1 ? { clip: { x: 0, y: 0, width: viewport.clientWidth, height: viewport.clientHeight, scale } } : {}),
      };
      const { data } = await cdp.send<{ data: string }>('Page.captureScreenshot', params, { sessionId, signal });
      const bytes = Buffer.from(data, 'base64');
      return { data: bytes, ...imageSize(bytes) };
    });
  }

  hide(): Promise<void> {
    return this.serial(async () => {
      const browser = this.browser;
      this.browser = undefined;
      await browser?.close();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const browser = this.browser;
    this.browser = undefined;
    await browser?.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** The canvas window controller; nothing starts until the first `present`. */
export function createCanvasWindow(options: CanvasWindowOptions): CanvasWindow {
  return new Window(options);
}
