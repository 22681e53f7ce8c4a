import { delay } from '@capnode/toolkit';
import { CapabilityError } from '../../errors.js';
import { NAMED_KEYS, type KeySpec } from './computerKeys.js';
import type { InputBackend, InputContext, InputStep, MouseButton } from './computerSteps.js';
import { pointIn } from './displayFrames.js';
import { openCachedX11, pickScreen, screensOf } from './screenLinux.js';
import { keysymOfChar, openX11Input, type X11Input } from './x11Input.js';
import type { ScreenInfo } from './screenArgs.js';

function keysymOf(key: KeySpec): number {
  return key.kind === 'named' ? NAMED_KEYS[key.name].x11 : keysymOfChar(key.char);
}

function cancelled(): CapabilityError {
  return new CapabilityError('cancelled', 'The computer action was cancelled; input stopped.');
}

/** What is held down while steps run, released in reverse when they stop early. */
class Held {
  private readonly keys: number[] = [];
  private readonly buttons: MouseButton[] = [];
  key(keysym: number, down: boolean): void {
    if (down) this.keys.push(keysym);
    else this.keys.splice(this.keys.lastIndexOf(keysym) >>> 0, 1);
  }
  button(button: MouseButton, down: boolean): void {
    if (down) this.buttons.push(button);
    else this.buttons.splice(this.buttons.lastIndexOf(button) >>> 0, 1);
  }
  async release(input: X11Input): Promise<void> {
    if (this.buttons.length === 0 && this.keys.length === 0) return;
    for (const button of this.buttons.splice(0).reverse()) input.button(button, false);
    for (const keysym of this.keys.splice(0).reverse()) await input.key(keysym, false);
    await input.sync();
  }
}

/** Types `text` one character at a time, checking the signal before each. */
async function typeText(input: X11Input, text: string, signal: AbortSignal): Promise<void> {
  for (const char of text) {
    if (signal.aborted) throw cancelled();
    const keysym = keysymOfChar(char);
    await input.key(keysym, true);
    await input.key(keysym, false);
    // One round trip per character: the server has delivered it before the next (and before a cancel lands).
    await input.sync();
  }
}

async function runStep(input: X11Input, screens: readonly ScreenInfo[], step: InputStep, held: Held, signal: AbortSignal): Promise<void> {
  switch (step.kind) {
    case 'move': {
      const { x, y } = pointIn(pickScreen(screens, step.point.screenIndex), step.point);
      input.move(x, y);
      return;
    }
    case 'button':
      held.button(step.button, step.down);
      input.button(step.button, step.down);
      return;
    case 'key': {
      const keysym = keysymOf(step.key);
      held.key(keysym, step.down);
      await input.key(keysym, step.down);
      return;
    }
    case 'text':
      await input.sync();
      await typeText(input, step.text, signal);
      return;
    case 'pause':
      await input.sync();
      await delay(step.ms, { signal }).catch(() => {
        throw cancelled();
      });
      return;
  }
}

/** The action running on each display: actions take turns, so two callers' keystrokes never interleave. */
const running = new Map<string, Promise<unknown>>();

async function inTurn<T>(display: string, work: () => Promise<T>): Promise<T> {
  const before = running.get(display) ?? Promise.resolve();
  const turn = before.catch(() => undefined).then(work);
  const settled = turn.catch(() => undefined);
  running.set(display, settled);
  try {
    return await turn;
  } finally {
    if (running.get(display) === settled) running.delete(display);
  }
}

/**
 * Linux/X11: input through XTEST over the display's socket (no process per action). Motion,
 * buttons and keys go out back to back and end with one round trip, so the call returns once the
 * X server has handled them; typing syncs after each character and stops at once on cancel.
 * Whatever the steps pressed is released when they stop early; actions on one display take turns.
 */
export function createX11InputBackend(display: string): InputBackend {
  const open = async (ctx: InputContext) => {
    const client = await openCachedX11(display, ctx, 'input');
    return { client, input: await openX11Input(client) };
  };
  return {
    async screens(ctx) {
      return screensOf(await openCachedX11(display, ctx, 'input'), ctx.signal);
    },
    run: (steps, ctx) => inTurn(display, async () => {
      if (ctx.signal.aborted) throw cancelled();
      const { client, input } = await open(ctx);
      const screens = steps.some((step) => step.kind === 'move') ? await screensOf(client, ctx.signal) : [];
      const held = new Held();
      try {
        for (const step of steps) {
          if (ctx.signal.aborted) throw cancelled();
          await runStep(input, screens, step, held, ctx.signal);
        }
        await input.sync();
      } catch (error) {
        // Stopped early: nothing it pressed stays down (a completed left_mouse_down keeps its button, as asked).
        await held.release(input).catch(() => undefined);
        throw error;
      }
    }),
  };
}
