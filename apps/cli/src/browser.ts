import { spawn } from 'node:child_process';

/**
 * The program that opens a URL in the user's browser: `$BROWSER`, else the platform's opener
 * (xdg-open, open, and on Windows the URL protocol handler: `cmd /c start` would parse `&` in the URL).
 */
export function browserOpener(env: Readonly<Record<string, string | undefined>>, platform: NodeJS.Platform = process.platform): { command: string; args: (url: string) => string[] } {
  if (env.BROWSER) return { command: env.BROWSER, args: (url) => [url] };
  if (platform === 'darwin') return { command: 'open', args: (url) => [url] };
  if (platform === 'win32') return { command: 'rundll32', args: (url) => ['url.dll,FileProtocolHandler', url] };
  return { command: 'xdg-open', args: (url) => [url] };
}

/**
 * How long an opener may take to fail before it counts as started: xdg-open without a display (an
 * SSH session, a headless machine) exits non-zero at once, a working one hands the URL on and exits 0
 * or stays running with the browser.
 */
const OPENER_FAILS_WITHIN_MS = 2_000;

/**
 * Starts the opener detached, without a shell. Resolves false when it cannot be started (not
 * installed) or exits with an error within {@link OPENER_FAILS_WITHIN_MS}, so the caller prints the URL.
 */
export function openBrowser(url: string, env: Readonly<Record<string, string | undefined>>): Promise<boolean> {
  const { command, args } = browserOpener(env);
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(command, args(url), { detached: true, stdio: 'ignore', windowsHide: true, env: env as NodeJS.ProcessEnv });
    } catch {
      resolve(false);
      return;
    }
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      const settled = setTimeout(() => {
        child.unref();
        resolve(true);
      }, OPENER_FAILS_WITHIN_MS);
      child.once('exit', (code, signal) => {
        clearTimeout(settled);
        resolve(code === 0 && signal === null);
      });
    });
  });
}
