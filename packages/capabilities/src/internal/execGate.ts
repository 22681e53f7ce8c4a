import type { InvocationRequest } from '../contract.js';

/** What the exec approval hook approved for one request: the command runs exactly this. */
export interface ApprovedExec {
  /** The program path the policy matched, when it was resolved. */
  readonly resolvedPath?: string;
  /** The real working directory the policy matched, when the call gave one. */
  readonly cwd?: string;
  /** The variables the policy saw (exact values). */
  readonly env?: Readonly<Record<string, string>>;
}

/** Requests the exec approval hook let through; exec commands refuse requests it never saw. */
const passed = new WeakMap<InvocationRequest, ApprovedExec>();

/** Records that the exec approval hook allowed this request, and what exactly it allowed. */
export function markExecApproved(request: InvocationRequest, approved: ApprovedExec = {}): void {
  passed.set(request, approved);
}

/** True when the exec approval hook allowed this request (the pipeline hands hooks and the command the same object). */
export function isExecApproved(request: InvocationRequest): boolean {
  return passed.has(request);
}

/** What the exec approval hook allowed for this request; `undefined` when it never saw it. */
export function approvedExec(request: InvocationRequest): ApprovedExec | undefined {
  return passed.get(request);
}
