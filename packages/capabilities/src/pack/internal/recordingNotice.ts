import type { CommandContext } from '../../contract.js';

/**
 * Tells the user of this machine that a recording is running (screen, camera, microphone). The
 * default shows a desktop notification through the `system.notify` backend; a failure to notify
 * is logged, never fatal.
 */
export type RecordingNotifier = (notice: { readonly title: string; readonly body: string }, options: { readonly signal: AbortSignal; readonly env: NodeJS.ProcessEnv }) => Promise<void>;

/** The default {@link RecordingNotifier}: a desktop notification (notify-send, osascript, PowerShell toast). */
export const desktopRecordingNotifier: RecordingNotifier = async (notice, options) => {
  const { showDesktopNotification } = await import('../../builtins/systemNotify.js');
  await showDesktopNotification({ title: notice.title, body: notice.body, urgency: 'critical', env: options.env, signal: options.signal });
};

/** Starts the notice without waiting for it; a failure becomes a warning in the caller's log. */
export function announceRecording(notifier: RecordingNotifier | false | undefined, notice: { title: string; body: string }, env: NodeJS.ProcessEnv, ctx: CommandContext): void {
  if (notifier === false) return;
  const notify = notifier ?? desktopRecordingNotifier;
  // The notice outlives a cancelled recording only by its own short timeout.
  notify(notice, { signal: new AbortController().signal, env }).catch((error: unknown) => {
    ctx.log('warning', `Could not tell the user about the recording: ${error instanceof Error ? error.message : String(error)}`);
  });
}

/** Who asked, for the notice: the caller's name and transport. */
export function requester(ctx: CommandContext): string {
  const caller = ctx.request.caller ? `${ctx.request.caller} ` : '';
  return `${caller}(${ctx.request.transport})`.trim();
}

/** Reports progress every second while `work` runs: elapsed of `totalMs`. */
export async function withRecordingProgress<T>(ctx: CommandContext, totalMs: number, what: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const timer = setInterval(() => {
    const elapsed = Math.min(totalMs, Date.now() - started);
    ctx.progress({ progress: elapsed, total: totalMs, message: `${what}: ${Math.round(elapsed / 1000)} s of ${Math.round(totalMs / 1000)} s` });
  }, 1_000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
