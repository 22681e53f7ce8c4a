import { createHash } from 'node:crypto';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { writePrivateFileAtomicSync } from '@capnode/toolkit/node';
import { TrayError } from './errors.js';

const HELPER_NAMES: Partial<Record<NodeJS.Platform, string>> = {
  linux: 'tray_linux_release',
  darwin: 'tray_darwin_release',
  win32: 'tray_windows_release.exe',
};

/**
 * The native helper systray2 ships for `platform` (inside its package, `traybin/`). Resolved from the
 * package itself, never from the working directory (systray2's own lookup tries `./traybin` first).
 * @throws TrayError `helper_unavailable` on a platform systray2 has no helper for.
 */
export function bundledTrayHelper(platform: NodeJS.Platform = process.platform): string {
  const name = HELPER_NAMES[platform];
  if (!name) throw new TrayError('helper_unavailable', `no tray helper for ${platform}: the tray runs on Linux, macOS and Windows (use capnode serve and capnode ui here)`);
  const packageJson = createRequire(import.meta.url).resolve('systray2/package.json');
  return join(dirname(packageJson), 'traybin', name);
}

/** Where a runnable copy of the helper is kept when the installed one lacks its execute bit. */
export function trayHelperCacheDir(env: Readonly<Record<string, string | undefined>> = process.env, platform: NodeJS.Platform = process.platform): string {
  const user = env.HOME || homedir();
  if (platform === 'darwin') return join(user, 'Library', 'Caches', 'capnode', 'tray-helper');
  return join(env.XDG_CACHE_HOME || join(user, '.cache'), 'capnode', 'tray-helper');
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * A path the helper can be spawned from. Package managers do not always keep the execute bit of
 * systray2's binaries (a content-addressed store hands them out 0644), and the store may not be
 * ours to chmod: then the helper is copied, once per content hash, into `cacheDir` (0700) as 0755.
 * @throws TrayError `helper_unavailable` when the helper is missing or cannot be copied.
 */
export function runnableTrayHelper(file: string, cacheDir: string, platform: NodeJS.Platform = process.platform): string {
  let bytes: Buffer;
  try {
    if (!statSync(file).isFile()) throw new Error('not a regular file');
    if (platform === 'win32' || isExecutable(file)) return file;
    bytes = readFileSync(file);
  } catch (error) {
    throw new TrayError('helper_unavailable', `the tray helper ${file} is missing or unreadable (${(error as Error).message}); reinstall @capnode/tray`, { cause: error });
  }
  const digest = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  const target = join(cacheDir, `${digest}-${file.split(/[\\/]/).pop()}`);
  if (isExecutable(target)) return target;
  try {
    writePrivateFileAtomicSync(target, bytes, { mode: 0o755 });
  } catch (error) {
    throw new TrayError('helper_unavailable', `the tray helper ${file} is not executable and cannot be copied to ${cacheDir}: ${(error as Error).message}`, { cause: error });
  }
  return target;
}
