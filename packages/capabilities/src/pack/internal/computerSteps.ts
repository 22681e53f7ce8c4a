import type { KeySpec } from './computerKeys.js';
import type { FramePoint } from './displayFrames.js';

/** Mouse buttons as X11 numbers them: 1 left, 2 middle, 3 right, 4–7 wheel up, down, left, right. */
export type MouseButton = 1 | 2 | 3 | 4 | 5 | 6 | 7;

/**
 * One low-level input step of a `computer.act` action. Every backend runs the same steps: X11
 * through XTEST in process, macOS and Windows through one helper process per action.
 */
export type InputStep =
  | { readonly kind: 'move'; readonly point: FramePoint }
  | { readonly kind: 'button'; readonly button: MouseButton; readonly down: boolean }
  | { readonly kind: 'key'; readonly key: KeySpec; readonly down: boolean }
  /** Types text one character at a time (a cancel stops it before the next character). */
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'pause'; readonly ms: number };

/** Presses keys in order, then runs `inner`, then releases them in reverse. */
export function withKeysHeld(keys: readonly KeySpec[], inner: readonly InputStep[]): InputStep[] {
  return [...keys.map((key): InputStep => ({ kind: 'key', key, down: true })), ...inner, ...[...keys].reverse().map((key): InputStep => ({ kind: 'key', key, down: false }))];
}

/** `count` clicks of `button` (press and release each). */
export function clicks(button: MouseButton, count: number): InputStep[] {
  const steps: InputStep[] = [];
  for (let i = 0; i < count; i++) steps.push({ kind: 'button', button, down: true }, { kind: 'button', button, down: false });
  return steps;
}

/** Motion from `from` to `to` in `parts` even steps (a drag that applications see move). */
export function glide(from: FramePoint, to: FramePoint, parts: number): InputStep[] {
  const steps: InputStep[] = [];
  for (let i = 1; i <= parts; i++) {
    steps.push({ kind: 'move', point: { screenIndex: to.screenIndex, fx: from.fx + ((to.fx - from.fx) * i) / parts, fy: from.fy + ((to.fy - from.fy) * i) / parts } });
  }
  return steps;
}

/** What a backend needs to run steps. */
export interface InputContext {
  readonly signal: AbortSignal;
  readonly env: NodeJS.ProcessEnv;
}

/** Runs input steps on one platform; releases whatever it pressed when it stops early. */
export interface InputBackend {
  run(steps: readonly InputStep[], ctx: InputContext): Promise<void>;
  /** The screen rectangles now, when the backend knows them (X11): a moved screen makes frames stale. */
  screens?(ctx: InputContext): Promise<readonly { x: number; y: number; width: number; height: number }[]>;
}
