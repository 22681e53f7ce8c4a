import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { eventually } from './poll.js';

/** A button press xev saw: the button and where on the root window. */
export interface RecordedClick {
  readonly button: number;
  readonly rootX: number;
  readonly rootY: number;
}

/** A real X window (xev from x11-utils) that records the pointer buttons and keys it receives. */
export interface XevWindow extends AsyncDisposable {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  readonly presses: RecordedClick[];
  readonly releases: RecordedClick[];
  /** Keysyms of every KeyPress, in order (modifiers included). */
  readonly keysyms: number[];
  /** The text the key presses typed, as a text field would see it (modifier keys left out). */
  text(): string;
  close(): Promise<void>;
}

/** Whether xev and xwininfo (Debian x11-utils) are installed. */
export function hasXev(): boolean {
  return spawnSync('sh', ['-c', 'command -v xev && command -v xwininfo'], { stdio: 'ignore' }).status === 0;
}

const MODIFIER_KEYSYMS = new Set([0xffe1, 0xffe2, 0xffe3, 0xffe4, 0xffe5, 0xffe7, 0xffe8, 0xffe9, 0xffea, 0xffeb, 0xffec]);

function charOfKeysym(keysym: number): string {
  if (keysym === 0xff0d) return '\n';
  if (keysym === 0xff09) return '\t';
  if (keysym >= 0x01000000) return String.fromCodePoint(keysym - 0x01000000);
  if (keysym < 0x100) return String.fromCharCode(keysym);
  return `<0x${keysym.toString(16)}>`;
}

/**
 * Starts xev with a window at `x`,`y` (no window manager: it stays there) and resolves once the
 * window is viewable. Events are parsed from xev's output as they come (line-buffered by stdbuf).
 */
export async function startXevWindow(env: NodeJS.ProcessEnv, geometry: { x: number; y: number; width: number; height: number }): Promise<XevWindow> {
  const { x, y, width, height } = geometry;
  const name = `capnode-xev-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const child = spawn('stdbuf', ['-oL', 'xev', '-name', name, '-geometry', `${width}x${height}+${x}+${y}`, '-event', 'keyboard', '-event', 'button'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  const presses: RecordedClick[] = [];
  const releases: RecordedClick[] = [];
  const keysyms: number[] = [];
  let current: 'ButtonPress' | 'ButtonRelease' | 'KeyPress' | undefined;
  let root: { rootX: number; rootY: number } | undefined;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const header = /^(ButtonPress|ButtonRelease|KeyPress|KeyRelease) event/.exec(line);
    if (header) {
      current = header[1] === 'KeyRelease' ? undefined : (header[1] as typeof current);
      return;
    }
    const position = /root:\((-?\d+),(-?\d+)\)/.exec(line);
    if (position) root = { rootX: Number(position[1]), rootY: Number(position[2]) };
    const button = /button (\d+),/.exec(line);
    if (button && root && (current === 'ButtonPress' || current === 'ButtonRelease')) (current === 'ButtonPress' ? presses : releases).push({ button: Number(button[1]), ...root });
    const key = /\(keysym 0x([0-9a-f]+),/.exec(line);
    if (key && current === 'KeyPress') keysyms.push(parseInt(key[1]!, 16));
  });
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  try {
    await eventually(() => /IsViewable/.test(spawnSync('xwininfo', ['-name', name], { env, encoding: 'utf8' }).stdout ?? ''), { what: 'the xev window to be mapped', timeoutMs: 15_000 });
  } catch (error) {
    await close();
    throw error;
  }
  return {
    x,
    y,
    width,
    height,
    presses,
    releases,
    keysyms,
    text: () => keysyms.filter((keysym) => !MODIFIER_KEYSYMS.has(keysym)).map(charOfKeysym).join(''),
    close,
    [Symbol.asyncDispose]: close,
  };
}
