import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Standard install locations of Chromium and Chrome, per platform, most specific first. */
function candidates(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string[] {
  if (platform === 'darwin') {
    const apps = ['Chromium.app/Contents/MacOS/Chromium', 'Google Chrome.app/Contents/MacOS/Google Chrome'];
    return [...apps.map((app) => `/Applications/${app}`), ...(env.HOME ? apps.map((app) => join(env.HOME!, 'Applications', app)) : [])];
  }
  if (platform === 'win32') {
    const roots = [env.LOCALAPPDATA, env.PROGRAMFILES, env['PROGRAMFILES(X86)']].filter((root): root is string => Boolean(root));
    return roots.flatMap((root) => [join(root, 'Chromium', 'Application', 'chrome.exe'), join(root, 'Google', 'Chrome', 'Application', 'chrome.exe')]);
  }
  const names = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
  const path = (env.PATH ?? '').split(delimiter).filter((entry) => entry.startsWith('/'));
  return [...names.flatMap((name) => path.map((dir) => join(dir, name))), '/snap/bin/chromium'];
}

function isExecutable(file: string, platform: NodeJS.Platform): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    if (platform !== 'win32') accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The system's Chromium (or Chrome) executable: `CAPNODE_CHROMIUM` when it names an executable file,
 * else the first standard location that holds one; `undefined` when none does. Looks at files only.
 */
export function findChromiumExecutable(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string | undefined {
  const override = env.CAPNODE_CHROMIUM?.trim();
  if (override) return isExecutable(override, platform) ? override : undefined;
  return candidates(env, platform).find((file) => isExecutable(file, platform));
}
