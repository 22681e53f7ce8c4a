import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Environment variable naming the Chromium (or Chrome) executable to use; wins over every standard place. */
export const CHROMIUM_ENV = 'CAPNODE_CHROMIUM';

/** Program names looked up in PATH on Linux, most specific first. */
const LINUX_NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome', 'microsoft-edge'];

const LINUX_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/snap/bin/chromium', '/usr/bin/google-chrome-stable', '/usr/bin/google-chrome', '/opt/google/chrome/chrome'];

const MAC_APPS = ['Chromium.app/Contents/MacOS/Chromium', 'Google Chrome.app/Contents/MacOS/Google Chrome', 'Microsoft Edge.app/Contents/MacOS/Microsoft Edge'];

const WINDOWS_SUFFIXES = ['Chromium\\Application\\chrome.exe', 'Google\\Chrome\\Application\\chrome.exe', 'Microsoft\\Edge\\Application\\msedge.exe'];

function isExecutable(file: string, windows: boolean): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    if (!windows) accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function candidates(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string[] {
  if (platform === 'darwin') {
    const home = env.HOME;
    return MAC_APPS.flatMap((app) => [join('/Applications', app), ...(home ? [join(home, 'Applications', app)] : [])]);
  }
  if (platform === 'win32') {
    const roots = [env.LOCALAPPDATA, env.PROGRAMFILES, env['PROGRAMFILES(X86)']].filter((root): root is string => Boolean(root));
    return roots.flatMap((root) => WINDOWS_SUFFIXES.map((suffix) => `${root}\\${suffix}`));
  }
  // Absolute PATH entries only: a relative one would make the current directory part of the search.
  const path = (env.PATH ?? '').split(delimiter).filter((entry) => entry.startsWith('/'));
  return [...LINUX_NAMES.flatMap((name) => path.map((entry) => join(entry, name))), ...LINUX_PATHS];
}

/**
 * The Chromium-family browser to drive: `CAPNODE_CHROMIUM` when set (taken as given, so a missing file
 * fails loudly at launch rather than silently falling back), else the first installed one of the
 * standard places (Linux: PATH, then /usr/bin, /snap/bin, /opt; macOS: /Applications and
 * ~/Applications; Windows: LOCALAPPDATA and Program Files). `undefined` when none is installed.
 */
export function findChromiumExecutable(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string | undefined {
  const override = env[CHROMIUM_ENV];
  if (override) return override;
  const windows = platform === 'win32';
  return candidates(env, platform).find((file) => isExecutable(file, windows));
}
