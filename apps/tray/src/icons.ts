import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TrayIconImages } from './trayHelper.js';

/** The directory of the committed icons (`assets/`, beside `src/` and `dist/`). */
export function trayAssetsDir(): string {
  return fileURLToPath(new URL('../assets/', import.meta.url));
}

/** The three tray icons for `platform`: ICO on Windows, PNG elsewhere (drawn by scripts/icons.mjs). */
export function loadTrayIcons(platform: NodeJS.Platform = process.platform): TrayIconImages {
  const ext = platform === 'win32' ? 'ico' : 'png';
  const dir = trayAssetsDir();
  const load = (state: string) => readFileSync(`${dir}${state}.${ext}`);
  return { ok: load('ok'), attention: load('attention'), error: load('error') };
}
