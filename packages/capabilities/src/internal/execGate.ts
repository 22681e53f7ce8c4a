import type { InvocationRequest } from '../contract.js';

/** Requests the exec approval hook let through; exec commands refuse requests it never saw. */
const passed = new WeakSet<InvocationRequest>();

/** Records that the exec approval hook allowed this request. */
export function markExecApproved(request: InvocationRequest): void {
  passed.add(request);
}

/** True when the exec approval hook allowed this request (the pipeline hands hooks and the command the same object). */
export function isExecApproved(request: InvocationRequest): boolean {
  return passed.has(request);
}
