import type { ControlAuditEntry } from './audit.js';
import type { SettingsPatchResult } from '../config/settingsPatch.js';

/** Where a control surface (dashboard, admin API) sends its records; the surface adds its transport. */
export type ControlAudit = (entry: Omit<ControlAuditEntry, 'transport'>) => void;

/**
 * `apply(patch)`, recorded as `capnode.settings`: the paths it changed (nothing when it changed
 * nothing), or the paths it was refused for (`invalid_settings`), or `failed` when it throws (then
 * rethrown). Paths only: values can be secrets.
 */
export async function auditedSettingsPatch(apply: (patch: unknown) => Promise<SettingsPatchResult>, patch: unknown, audit: ControlAudit): Promise<SettingsPatchResult> {
  const started = performance.now();
  let result: SettingsPatchResult;
  try {
    result = await apply(patch);
  } catch (error) {
    audit({ command: 'capnode.settings', outcome: 'failed', durationMs: performance.now() - started });
    throw error;
  }
  const durationMs = performance.now() - started;
  if (!result.ok) audit({ command: 'capnode.settings', outcome: 'invalid_settings', changed: result.fields.map((field) => field.path), durationMs });
  else if (result.changed.length > 0) audit({ command: 'capnode.settings', changed: result.changed, durationMs });
  return result;
}

/** `rotate()`, recorded as `capnode.token.rotate` once it succeeded. */
export async function auditedTokenRotation(rotate: () => Promise<void>, audit: ControlAudit): Promise<void> {
  const started = performance.now();
  await rotate();
  audit({ command: 'capnode.token.rotate', durationMs: performance.now() - started });
}
