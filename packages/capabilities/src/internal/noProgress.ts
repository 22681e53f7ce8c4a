import type { ProgressUpdate } from '../contract.js';

/**
 * The progress function a command's context holds when its caller asked for no progress. A command
 * can always call `context.progress`; an approval wait tells a caller that shows progress (it waits)
 * from one that does not (held, then `approval_pending`) by this identity.
 */
export const NO_PROGRESS: (update: ProgressUpdate) => void = () => {};

/** Whether `progress` reaches a caller. */
export function reachesCaller(progress: ((update: ProgressUpdate) => void) | undefined): boolean {
  return progress !== undefined && progress !== NO_PROGRESS;
}
