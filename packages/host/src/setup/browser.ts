import { spawn } from 'node:child_process';
import { armDeadline } from '@capnode/toolkit';

/** The program that opens a URL in the user's browser and its arguments for one URL. */
export interface BrowserOpener {
  readonly command: string;
  readonly args: (url: string) => string[];
}

/** Where and how {@link openBrowser} runs the opener. */
export interface OpenBrowserOptions {
  /** Environment of the opener; `BROWSER` and `PATH` are read from it (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly platform?: NodeJS.Platform;
  /** Stops waiting for an early failure (the opener keeps running); the promise rejects with the reason. */
  readonly signal?: AbortSignal;
}

/** What {@link openBrowser} saw: `not_started` (not installed, not executable), `failed` (exited with an error within the window). */
export type OpenBrowserResult =
  | { readonly opened: true; readonly command: string }
  | { readonly opened: false; readonly command: string; readonly reason: 'not_started' | 'failed'; readonly detail: string };

/**
 * How long an opener may take to fail before it counts as started: xdg-open without a display (an
 * SSH session, a headless machine) exits non-zero at once, a working one hands the URL on and exits 0
 * or stays running with the browser.
 */
export const BROWSER_OPENER_FAILS_WITHIN_MS = 2_000;

/**
 * The program that opens a URL in the user's browser: `$BROWSER`, else the platform's opener
 * (xdg-open, open, and on Windows the URL protocol handler: `cmd /c start` would parse `&` in the URL).
 */
export function browserOpener(env: Readonly<Record<string, string | undefined>> = process.env, platform: NodeJS.Platform = process.platform): BrowserOpener {
  if (env.BROWSER) return { command: env.BROWSER, args: (url) => [url] };
  if (platform === 'darwin') return { command: 'open', args: (url) => [url] };
  if (platform === 'win32') return { command: 'rundll32', args: (url) => ['url.dll,FileProtocolHandler', url] };
  return { command: 'xdg-open', args: (url) => [url] };
}

/**
 * Starts the {@link browserOpener} on `url`, detached and without a shell (the URL is one argument,
 * never parsed). Resolves `opened: false` when the opener cannot be started or exits with an error
 * within {@link BROWSER_OPENER_FAILS_WITHIN_MS}, so the caller shows the URL instead; an opener still
 * running after that is left to run on its own (unreferenced: the caller's process may exit).
 */
export function openBrowser(url: string, options: OpenBrowserOptions = {}): Promise<OpenBrowserResult> {
  const env = options.env ?? process.env;
  const { command, args } = browserOpener(env, options.platform);
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, args(url), { detached: true, stdio: 'ignore', windowsHide: true, env: env as NodeJS.ProcessEnv });
    } catch (error) {
      resolve({ opened: false, command, reason: 'not_started', detail: (error as Error).message });
      return;
    }
    let settled = false;
    const settle = (result: OpenBrowserResult | { readonly aborted: unknown }) => {
      deadline.clear();
      if (settled) return;
      settled = true;
      child.unref();
      if ('aborted' in result) reject(result.aborted);
      else resolve(result);
    };
    // The caller's signal from the start; the failure window from the moment the opener runs.
    const arm = (timeoutMs?: number) =>
      armDeadline({ ...(signal === undefined ? {} : { signal }), ...(timeoutMs === undefined ? {} : { timeoutMs }) }, (reason, timedOut) =>
        settle(timedOut ? { opened: true, command } : { aborted: reason }),
      );
    let deadline = arm();
    child.once('error', (error) => settle({ opened: false, command, reason: 'not_started', detail: error.message }));
    child.once('spawn', () => {
      deadline.clear();
      if (!settled) deadline = arm(BROWSER_OPENER_FAILS_WITHIN_MS);
      child.once('exit', (code, exitSignal) =>
        settle(code === 0 && exitSignal === null ? { opened: true, command } : { opened: false, command, reason: 'failed', detail: exitSignal ? `killed by ${exitSignal}` : `exit code ${code}` }),
      );
    });
  });
}
