import { z } from 'zod';
import { CapabilityError } from '../../errors.js';
import { parseKeyCombos, parseModifiers } from './computerKeys.js';
import { clicks, glide, withKeysHeld, type InputStep, type MouseButton } from './computerSteps.js';
import type { FramePoint } from './displayFrames.js';

/** The desktop actions of OpenClaw's `computer.act` (contract v1 plus `wait`). */
export const COMPUTER_ACTIONS = ['left_click', 'right_click', 'middle_click', 'double_click', 'triple_click', 'mouse_move', 'left_click_drag', 'left_mouse_down', 'left_mouse_up', 'scroll', 'type', 'key', 'hold_key', 'wait'] as const;
export type ComputerAction = (typeof COMPUTER_ACTIONS)[number];

/** Longest text one `type` action sends. */
export const MAX_TYPE_CHARS = 10_000;
/** Longest `hold_key` and `wait`. */
export const MAX_HOLD_MS = 30_000;
export const MAX_WAIT_MS = 60_000;
/** Most wheel ticks of one scroll (as OpenClaw's agent caps it). */
export const MAX_SCROLL_AMOUNT = 100;

const coordinate = z.number().finite();
const notSupported = z.string().max(200).optional().describe('Window and element targets are not supported (desktop only): refused.');

/** `computer.act` arguments: OpenClaw's canonical wire shape. */
export const computerActInput = z.object({
  action: z.enum(COMPUTER_ACTIONS).describe('What to do; clicks, mouse_move and left_click_drag need x, y and the frame.'),
  executionId: z.string().min(1).max(128).optional().describe("OpenClaw's execution id; frames are bound to the one that took them."),
  displayFrameId: z.string().min(1).max(128).optional().describe('displayFrameId of the latest screen.snapshot (required with coordinates).'),
  refWidth: z.number().int().min(1).max(65_535).optional().describe('Width of the picture the coordinates refer to (the frame width, or the maxWidth it was taken with).'),
  screenIndex: z.number().int().min(0).max(63).optional().describe("Must be the frame's screen when given."),
  x: coordinate.optional().describe('Pixel column in the latest screen.snapshot picture (0 ≤ x < its width).'),
  y: coordinate.optional().describe('Pixel row in the latest screen.snapshot picture (0 ≤ y < its height).'),
  fromX: coordinate.optional().describe('Drag start column (left_click_drag).'),
  fromY: coordinate.optional().describe('Drag start row (left_click_drag).'),
  modifiers: z.string().max(100).optional().describe('Modifier keys held during a click or scroll: shift, ctrl, alt, cmd (joined with +).'),
  scrollDirection: z.enum(['up', 'down', 'left', 'right']).optional(),
  scrollAmount: z.number().int().min(1).max(MAX_SCROLL_AMOUNT).optional().describe('Wheel ticks; default 3.'),
  text: z.string().max(MAX_TYPE_CHARS).optional().describe('Text to type (type).'),
  keys: z.string().max(200).optional().describe('Key combo for key/hold_key, e.g. ctrl+shift+t, Return, "ctrl+a Delete".'),
  durationMs: z.number().int().min(0).max(MAX_WAIT_MS).optional().describe('hold_key hold time (default 1000, ≤ 30000), wait time (default 1000), drag duration.'),
  windowRef: notSupported,
  elementRef: notSupported,
  observationId: notSupported,
  deliveryMode: z.enum(['background', 'foreground']).optional().describe('Only foreground (the desktop) is supported.'),
});
export type ComputerActArgs = z.output<typeof computerActInput>;

/** A refusal of an action this gateway node does not perform, with OpenClaw's code. */
export function unsupportedAction(message: string): CapabilityError {
  return new CapabilityError('unsupported', `COMPUTER_UNSUPPORTED_ACTION: ${message}`, { data: { code: 'COMPUTER_UNSUPPORTED_ACTION' } });
}

function invalid(message: string): CapabilityError {
  return new CapabilityError('invalid_arguments', `COMPUTER_INVALID_REQUEST: ${message}`, { data: { code: 'COMPUTER_INVALID_REQUEST' } });
}

const CLICKS: Partial<Record<ComputerAction, { button: MouseButton; count: number }>> = {
  left_click: { button: 1, count: 1 },
  right_click: { button: 3, count: 1 },
  middle_click: { button: 2, count: 1 },
  double_click: { button: 1, count: 2 },
  triple_click: { button: 1, count: 3 },
};

const WHEEL: Record<'up' | 'down' | 'left' | 'right', MouseButton> = { up: 4, down: 5, left: 6, right: 7 };

/** Whether the action's coordinates (when it has some) need a display frame. */
export function hasCoordinates(args: ComputerActArgs): boolean {
  return args.x !== undefined || args.y !== undefined || args.fromX !== undefined || args.fromY !== undefined;
}

/** Refuses targets and delivery modes of contract v2 this desktop-only gateway node does not offer. */
export function checkDesktopScope(args: ComputerActArgs): void {
  if (args.windowRef !== undefined || args.elementRef !== undefined || args.observationId !== undefined) {
    throw unsupportedAction('this gateway node controls the whole desktop; window and element targets are not supported');
  }
  if (args.deliveryMode === 'background') throw unsupportedAction('background delivery is not supported; input goes to the desktop');
}

/**
 * The input steps of one action. `point` maps frame pixels to a screen point (it checks the frame,
 * so actions without coordinates never need one).
 */
export function planAction(args: ComputerActArgs, point: (x: number | undefined, y: number | undefined, what: string) => FramePoint): InputStep[] {
  const click = CLICKS[args.action];
  const modifiers = () => parseModifiers(args.modifiers);
  const moveTo = (what: string): InputStep[] => (args.x === undefined && args.y === undefined ? [] : [{ kind: 'move', point: point(args.x, args.y, what) }]);
  if (click) {
    const at = point(args.x, args.y, args.action);
    return [{ kind: 'move', point: at }, ...withKeysHeld(modifiers(), clicks(click.button, click.count))];
  }
  switch (args.action) {
    case 'mouse_move':
      return [{ kind: 'move', point: point(args.x, args.y, 'mouse_move') }];
    case 'left_click_drag': {
      const from = point(args.fromX, args.fromY, 'drag start');
      const to = point(args.x, args.y, 'drag end');
      const parts = 8;
      const pause = Math.round((args.durationMs ?? 80) / parts);
      const path = glide(from, to, parts).flatMap((step): InputStep[] => [{ kind: 'pause', ms: pause }, step]);
      return [{ kind: 'move', point: from }, { kind: 'button', button: 1, down: true }, ...path, { kind: 'button', button: 1, down: false }];
    }
    case 'left_mouse_down':
    case 'left_mouse_up':
      return [...moveTo(args.action), ...withKeysHeld(modifiers(), [{ kind: 'button', button: 1, down: args.action === 'left_mouse_down' }])];
    case 'scroll': {
      if (!args.scrollDirection) throw invalid('scrollDirection (up, down, left or right) is required for scroll');
      return [...moveTo('scroll'), ...withKeysHeld(modifiers(), clicks(WHEEL[args.scrollDirection], args.scrollAmount ?? 3))];
    }
    case 'type':
      if (!args.text) throw invalid('text is required for type');
      return [{ kind: 'text', text: args.text }];
    case 'key':
      if (!args.keys) throw invalid('keys is required for key');
      return parseKeyCombos(args.keys).flatMap((combo) => withKeysHeld(combo, []));
    case 'hold_key': {
      if (!args.keys) throw invalid('keys is required for hold_key');
      const held = args.durationMs ?? 1_000;
      if (held > MAX_HOLD_MS) throw invalid(`hold_key holds at most ${MAX_HOLD_MS} ms`);
      return withKeysHeld(parseKeyCombos(args.keys).flat(), [{ kind: 'pause', ms: held }]);
    }
    case 'wait':
      return [{ kind: 'pause', ms: args.durationMs ?? 1_000 }];
    default:
      throw unsupportedAction(`unknown action ${JSON.stringify(args.action)}`);
  }
}
