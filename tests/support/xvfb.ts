import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startXServer, type XServer, type XServerOptions } from './display.js';
import { eventually } from './poll.js';

/** A running Xvfb server ({@link startXServer}) that a test can paint: for screen capture tests. */
export interface Xvfb extends XServer {
  /** Paints the root window one colour (`xsetroot -solid`), e.g. `#ff8000`. */
  paint(colour: string): void;
  /** Hides the pointer: a blank root cursor (`xsetroot -cursor` with an empty bitmap). */
  hidePointer(): void;
}

/** Sizes default to 1920×1080 here (a full-HD screen to capture). */
export type StartXvfbOptions = XServerOptions;

/** Whether Xvfb and xsetroot are installed (tests skip with a reason otherwise). */
export function hasXvfb(): boolean {
  return spawnSync('sh', ['-c', 'command -v Xvfb && command -v xsetroot'], { stdio: 'ignore' }).status === 0;
}

/**
 * Starts an X server through {@link startXServer} (default 1920×1080×24), paints its root window
 * black once xsetroot can reach it, and adds `paint` and `hidePointer`. `await using` stops it.
 */
export async function startXvfb(options: StartXvfbOptions = {}): Promise<Xvfb> {
  const server = await startXServer({ width: 1920, height: 1080, ...options });
  const { display, env } = server;
  const run = (args: string[]) => {
    const result = spawnSync('xsetroot', ['-display', display, ...args], { encoding: 'utf8', env });
    if (result.status !== 0) throw new Error(`xsetroot ${args.join(' ')} failed: ${result.stderr}`);
  };
  try {
    await eventually(() => spawnSync('xsetroot', ['-display', display, '-solid', 'black'], { env }).status === 0, { what: `Xvfb ${display} to accept clients`, timeoutMs: 15_000 });
  } catch (error) {
    await server.close();
    throw error;
  }
  return {
    ...server,
    paint: (colour) => run(['-solid', colour]),
    hidePointer() {
      const dir = mkdtempSync(join(tmpdir(), 'capnode-xbm-'));
      try {
        const file = join(dir, 'blank.xbm');
        // A 1×1 cursor whose mask is empty: nothing is drawn.
        writeFileSync(file, '#define blank_width 1\n#define blank_height 1\nstatic unsigned char blank_bits[] = { 0x00 };\n');
        run(['-cursor', file, file]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
