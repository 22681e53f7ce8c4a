import { z } from 'zod';
import { json } from '../content.js';
import { defineCapability, defineCommand, type Capability, type CommandContext } from '../contract.js';
import { definePlugin, type PluginContext } from '../plugin.js';
import { checkDesktopScope, computerActInput, planAction, type ComputerActArgs } from './internal/computerPlan.js';
import { frameError, framePoint, sharedDisplayFrames, type DisplayFrame, type DisplayFrames, type FramePoint } from './internal/displayFrames.js';
import { announceRecording, requester, type RecordingNotifier } from './internal/recordingNotice.js';
import type { InputBackend } from './internal/computerSteps.js';
import { envOf, platformOf, type PackEnvironment } from './internal/voiceProbe.js';
import { probeScreen } from './screen.js';

export interface ComputerCapabilityOptions extends PackEnvironment {
  /** PATH, DISPLAY and XAUTHORITY. Default `process.env` (read at call time). */
  readonly env?: NodeJS.ProcessEnv;
  /** X display to control instead of `env.DISPLAY` (Linux). */
  readonly display?: string;
  /** Tells the user the computer is being controlled; default a desktop notification; `false` turns it off (tests only). */
  readonly notify?: RecordingNotifier | false;
  /** The frames `screen.snapshot` issued; default the ones this process's screen capability shares. */
  readonly frames?: DisplayFrames;
}

/** How long control may pause before the next action notifies the user again. */
export const COMPUTER_NOTICE_QUIET_MS = 60_000;

const computerSettingsSchema = z.object({ display: z.string().min(1).optional() });

function displayOf(options: ComputerCapabilityOptions): string | undefined {
  return options.display ?? envOf(options).DISPLAY;
}

/** A notice when control starts, again after {@link COMPUTER_NOTICE_QUIET_MS} without actions. */
function createControlNotice(notify: RecordingNotifier | false | undefined): (args: ComputerActArgs, ctx: CommandContext, env: NodeJS.ProcessEnv) => void {
  let lastActionAt = Number.NEGATIVE_INFINITY;
  return (args, ctx, env) => {
    const now = Date.now();
    const quiet = now - lastActionAt > COMPUTER_NOTICE_QUIET_MS;
    lastActionAt = now;
    if (quiet) announceRecording(notify, { title: 'capnode is controlling your computer', body: `Pointer and keyboard input (${args.action}), asked by ${requester(ctx)}.` }, env, ctx);
  };
}

/** Refuses a frame whose screen moved or changed size since the snapshot (X11 knows the geometry). */
async function checkGeometry(frame: DisplayFrame | undefined, backend: InputBackend, frames: DisplayFrames, ctx: { signal: AbortSignal; env: NodeJS.ProcessEnv }): Promise<void> {
  if (!frame?.source || !backend.screens) return;
  const now = (await backend.screens(ctx))[frame.screenIndex];
  const then = frame.source;
  if (now && now.x === then.x && now.y === then.y && now.width === then.width && now.height === then.height) return;
  frames.forget(frame.scope);
  throw frameError('COMPUTER_STALE_FRAME', 'the screen changed geometry since the screenshot; take a new screenshot');
}

function createActCommand(options: ComputerCapabilityOptions) {
  const frames = options.frames ?? sharedDisplayFrames;
  const notice = createControlNotice(options.notify);
  return defineCommand({
    name: 'computer.act',
    description:
      "Drives this computer's pointer and keyboard (OpenClaw's computer.act): clicks, moves, drags, button down/up, scroll, type, key combos, hold_key, wait. " +
      'Coordinates are pixels of the latest screen.snapshot picture and must carry its displayFrameId (and refWidth); a stale frame is refused and nothing is clicked. The user is notified while the computer is controlled.',
    annotations: { title: 'Control the computer', readOnly: false, destructive: true, openWorld: false },
    consent: 'computer',
    availability: () => probeScreen(options),
    input: computerActInput,
    async execute(args, ctx) {
      checkDesktopScope(args);
      let frame: DisplayFrame | undefined;
      const point = (x: number | undefined, y: number | undefined, what: string): FramePoint => {
        frame ??= frames.verify({ id: args.displayFrameId, scope: args.executionId ?? '', screenIndex: args.screenIndex, refWidth: args.refWidth });
        return framePoint(frame, x, y, what);
      };
      // Every point is mapped (and its frame checked) before any input is sent.
      const steps = planAction(args, point);
      const env = envOf(options);
      const { inputBackendFor } = await import('./internal/computerBackend.js');
      const backend = inputBackendFor(platformOf(options), displayOf(options));
      const backendContext = { signal: ctx.signal, env };
      await checkGeometry(frame, backend, frames, backendContext);
      notice(args, ctx, env);
      await backend.run(steps, backendContext);
      return json({ ok: true, effect: 'unverifiable', details: { action: args.action } });
    },
  });
}

/**
 * The `computer` capability: `computer.act`, behind the `computer` consent (off by default). X11
 * input through XTEST on the display's socket; macOS through a JavaScript-for-Automation helper
 * (CoreGraphics events), Windows through a PowerShell SendInput helper; loaded on first use.
 * Declared to a gateway beside `screen.snapshot`, whose frames its coordinates refer to.
 */
export function createComputerCapability(options: ComputerCapabilityOptions = {}): Capability {
  return defineCapability({ category: 'computer', commands: [createActCommand(options)] });
}

/** The computer plugin of the capability pack; settings `pluginSettings.computer: { display? }`. */
export const computerPlugin = definePlugin((context: PluginContext): Capability => {
  const parsed = computerSettingsSchema.safeParse(context.settings);
  if (!parsed.success) context.log('warning', `pluginSettings.computer ignored: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  const display = parsed.success ? parsed.data.display : undefined;
  return createComputerCapability(display === undefined ? {} : { display });
});
