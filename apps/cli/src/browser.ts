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

/** Starts the opener detached, without a shell; resolves false when it cannot be started (not installed). */
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
      child.unref();
      resolve(true);
    });
  });
}
