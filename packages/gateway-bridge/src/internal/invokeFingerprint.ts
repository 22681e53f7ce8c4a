/**
 * Fields a gateway writes into a command's params on every dispatch, so a retry of one call differs
 * in them: OpenClaw's gateway puts a fresh random `runId` into each `system.run` that has none
 * (observed in openclaw@2026.9.6, `normalizeSystemRunInvokeParams`).
 */
const GATEWAY_INJECTED: Readonly<Record<string, readonly string[]>> = {
  'system.run': ['runId'],
};

/**
 * The arguments that identify a call for duplicate detection on its idempotency key: `args` without
 * the fields the gateway injects into `command`'s params. Everything else counts, so a different
 * command under the same key is still a conflict.
 */
export function fingerprintArgs(command: string, args: unknown): unknown {
  const injected = GATEWAY_INJECTED[command.toLowerCase()];
  if (!injected || typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const copy: Record<string, unknown> = { ...(args as Record<string, unknown>) };
  for (const field of injected) delete copy[field];
  return copy;
}
