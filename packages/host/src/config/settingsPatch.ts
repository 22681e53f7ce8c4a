import { z } from 'zod';
import { isPlainObject } from '@capnode/toolkit';
import { isHostError } from '../errors.js';
import { settingsSchema, type Settings, type SettingsStore } from './settings.js';

/** What a masked secret reads as; sending it back unchanged keeps the stored value. */
/** One field problem of a rejected settings change. */
export interface FieldError {
  readonly path: string;
  readonly message: string;
}

export const SECRET_MASK = '••••••••';

/** Setting paths (or section prefixes, ending in `.`) a running host applies at once. */
const LIVE = ['mcp.enabled', 'gateway.enabled', 'gateway.url', 'gateway.token', 'gateway.publishServers', 'execApprovals.', 'approvals.wait', 'approvals.elicit', 'approvals.notify', 'consent.', 'openagent.', 'plugins'];

export type SettingsPatchResult =
  | {
      readonly ok: true;
      readonly settings: Record<string, unknown>;
      /** Every setting path this change altered (two levels deep, e.g. `consent.screen`). */
      readonly changed: readonly string[];
      /** Changed paths the running host applied. */
      readonly applied: readonly string[];
      /** Every path changed since start that applies after a restart. */
      readonly restartNeeded: readonly string[];
      /** Changed paths the host tried to apply and could not (written, but not in effect), with why. */
      readonly failed?: readonly FieldError[];
    }
  | { readonly ok: false; readonly message: string; readonly fields: readonly FieldError[] };

const SECRET_KEY = /token|secret|password|passwd|api[_-]?key/i;

/** Masks every value of `record` (env, headers). */
function maskValues(record: unknown): unknown {
  if (!isPlainObject(record)) return record;
  return Object.fromEntries(Object.keys(record).map((key) => [key, SECRET_MASK]));
}

/** `value` with every string under a secret-named key masked, at any depth (`auth.client_secret`, a plugin's `apiKey`). */
function maskSecretNamed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskSecretNamed);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, typeof item === 'string' && SECRET_KEY.test(key) ? SECRET_MASK : maskSecretNamed(item)]));
}

function maskServer(entry: unknown): unknown {
  if (!isPlainObject(entry)) return entry;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    if (key === 'env' || key === 'headers') out[key] = maskValues(value);
    else if (typeof value === 'string' && SECRET_KEY.test(key)) out[key] = SECRET_MASK;
    else out[key] = maskSecretNamed(value);
  }
  return out;
}

/** The settings with every secret masked: `gateway.token`, `openagent.headers` values, imported servers' env and header values, secret-named fields at any depth (servers, plugin settings). */
export function maskSettings(settings: Settings): Record<string, unknown> {
  const out = structuredClone(settings) as Record<string, unknown>;
  const gateway = out.gateway as Record<string, unknown>;
  if (typeof gateway.token === 'string') gateway.token = SECRET_MASK;
  const openagent = out.openagent as Record<string, unknown>;
  openagent.headers = maskValues(openagent.headers);
  const mcpClient = out.mcpClient as Record<string, unknown> | undefined;
  if (mcpClient && Array.isArray(mcpClient.servers)) mcpClient.servers = mcpClient.servers.map(maskServer);
  if (isPlainObject(out.pluginSettings)) out.pluginSettings = maskSecretNamed(out.pluginSettings);
  return out;
}

/** `value` with every {@link SECRET_MASK} put back to what `previous` holds at the same place (servers matched by name). */
function unmask(value: unknown, previous: unknown): unknown {
  if (value === SECRET_MASK) return previous;
  if (Array.isArray(value)) {
    const before = Array.isArray(previous) ? previous : [];
    return value.map((item, index) => {
      const named = isPlainObject(item) && typeof item.name === 'string' ? before.find((old) => isPlainObject(old) && old.name === item.name) : before[index];
      return unmask(item, named);
    });
  }
  if (isPlainObject(value)) {
    const before = isPlainObject(previous) ? previous : {};
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, unmask(item, before[key])]));
  }
  return value;
}

/** Whether `value` holds {@link SECRET_MASK} anywhere. */
function holdsMask(value: unknown): boolean {
  if (value === SECRET_MASK) return true;
  if (Array.isArray(value)) return value.some(holdsMask);
  return isPlainObject(value) && Object.values(value).some(holdsMask);
}

/** What decides where a server's secrets go: its URL (headers), or the command and arguments it runs (env). */
const SERVER_DESTINATION = ['url', 'command', 'args'] as const;

/**
 * The server entries of `patch` that send a mask back with another URL, command or arguments than
 * the entry it stands for (matched as {@link unmask} matches it): a mask keeps a secret only where it
 * was shown, never carries it to a new destination.
 */
function redirectedSecrets(patch: Record<string, unknown>, current: Settings): FieldError[] {
  const servers = isPlainObject(patch.mcpClient) ? patch.mcpClient.servers : undefined;
  if (!Array.isArray(servers)) return [];
  const before: unknown[] = (current.mcpClient as { servers?: unknown[] } | undefined)?.servers ?? [];
  const fields: FieldError[] = [];
  servers.forEach((entry, index) => {
    if (!isPlainObject(entry) || !holdsMask(entry)) return;
    const previous = typeof entry.name === 'string' ? before.find((old) => isPlainObject(old) && old.name === entry.name) : before[index];
    if (!isPlainObject(previous)) return;
    const moved = SERVER_DESTINATION.filter((key) => JSON.stringify(entry[key]) !== JSON.stringify(previous[key]));
    if (moved.length) fields.push({ path: `mcpClient.servers[${index}]`, message: `a masked secret is kept only with the same ${moved.join(', ')}: send its value again` });
  });
  return fields;
}

/**
 * A patch that points the gateway node at another URL while the stored token would stay (not sent,
 * or sent back masked): the token was given for the old gateway and never follows a new URL by
 * itself. Sending the token again, or `null` to connect without one, is fine.
 */
function redirectedGatewayToken(patch: Record<string, unknown>, current: Settings): FieldError[] {
  const gateway = isPlainObject(patch.gateway) ? patch.gateway : undefined;
  if (!gateway || typeof gateway.url !== 'string' || current.gateway.token === undefined || current.gateway.url === undefined || gateway.url === current.gateway.url) return [];
  if (gateway.token !== undefined && gateway.token !== SECRET_MASK) return [];
  return [{ path: 'gateway.token', message: `the saved token is kept only for ${current.gateway.url}: send the token for the new gateway URL again (or null to connect without one)` }];
}

/** Objects merge key by key; arrays and plain values replace; `null` removes the key. */
export function mergePatch(current: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch) || !isPlainObject(current)) return patch;
  const out: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(current[key], value);
  }
  return out;
}

/** Paths that differ, two levels deep (`mcp.port`, `execApprovals.allowlist`, `mcpClient.servers`). */
export function changedPaths(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const changed: string[] = [];
  for (const section of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const a = before[section];
    const b = after[section];
    if (isPlainObject(a) && isPlainObject(b)) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) changed.push(`${section}.${key}`);
    } else if (JSON.stringify(a) !== JSON.stringify(b)) {
      changed.push(section);
    }
  }
  return changed;
}

export function isLivePath(path: string): boolean {
  return LIVE.some((live) => (live.endsWith('.') ? path.startsWith(live) || path === live.slice(0, -1) : path === live));
}

function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => ({
    path: issue.path.length ? issue.path.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index ? '.' : ''}${String(part)}`)).join('') : '(root)',
    message: issue.message,
  }));
}

/** What a settings change would make of `current`: the merged settings and the changed paths, or why it is refused. */
export type SettingsPatchPreview =
  | { readonly ok: true; readonly after: Settings; readonly changed: readonly string[] }
  | { readonly ok: false; readonly message: string; readonly fields: readonly FieldError[] };

/**
 * Checks a partial change against `current` the way {@link applySettingsPatch} does (masked secrets
 * never move to a new destination, the result validates against the whole schema), without writing:
 * what an approval prompt shows before anything is written.
 */
export function previewSettingsPatch(patch: unknown, current: Settings): SettingsPatchPreview {
  if (!isPlainObject(patch)) return { ok: false, message: 'expected a JSON object of settings to change', fields: [{ path: '(root)', message: 'expected an object' }] };
  const redirected = [...redirectedSecrets(patch, current), ...redirectedGatewayToken(patch, current)];
  if (redirected.length) return { ok: false, message: 'the settings were not changed: a saved secret cannot move to another destination', fields: redirected };
  const parsed = settingsSchema.safeParse(mergePatch(current, unmask(patch, current)));
  if (!parsed.success) return { ok: false, message: 'the settings were not changed: some values are invalid', fields: fieldErrors(parsed.error) };
  return { ok: true, after: parsed.data, changed: changedPaths(current as unknown as Record<string, unknown>, parsed.data as unknown as Record<string, unknown>) };
}

export interface ApplySettingsOptions {
  readonly store: SettingsStore;
  /** Applies the changed live paths to the running host (e.g. starts or stops the MCP listener); returns the ones that failed. */
  readonly applyLive: (changed: readonly string[], settings: Settings) => Promise<readonly FieldError[]>;
  /** Records the changed paths that need a restart; returns every such path so far. */
  readonly needRestart: (paths: readonly string[]) => readonly string[];
}

/**
 * Validates a partial change against the whole settings schema and writes it (re-read first, so
 * edits made meanwhile are kept); an invalid change writes nothing and names each bad field by path.
 * Then applies what a running host can apply live; the rest is listed as `restartNeeded`.
 */
export async function applySettingsPatch(patch: unknown, options: ApplySettingsOptions): Promise<SettingsPatchResult> {
  if (!isPlainObject(patch)) return { ok: false, message: 'expected a JSON object of settings to change', fields: [{ path: '(root)', message: 'expected an object' }] };
  let before: Settings | undefined;
  let redirected: FieldError[] = [];
  const refused = new Error('a masked secret sent to a new destination');
  let after: Settings;
  try {
    after = await options.store.update((current) => {
      before = current;
      redirected = [...redirectedSecrets(patch, current), ...redirectedGatewayToken(patch, current)];
      if (redirected.length) throw refused;
      return mergePatch(current, unmask(patch, current)) as Settings;
    });
  } catch (error) {
    if (error === refused) return { ok: false, message: 'the settings were not changed: a saved secret cannot move to another destination', fields: redirected };
    const cause = (error as { cause?: unknown }).cause;
    if (isHostError(error) && error.code === 'invalid_settings' && cause instanceof z.ZodError) {
      return { ok: false, message: 'the settings were not changed: some values are invalid', fields: fieldErrors(cause) };
    }
    throw error;
  }
  const changed = changedPaths((before ?? {}) as Record<string, unknown>, after as unknown as Record<string, unknown>);
  const live = changed.filter(isLivePath);
  const failed = await options.applyLive(live, after);
  const applied = live.filter((path) => !failed.some((failure) => failure.path === path));
  const restartNeeded = options.needRestart(changed.filter((path) => !isLivePath(path)));
  return { ok: true, settings: maskSettings(after), changed, applied, restartNeeded, ...(failed.length ? { failed } : {}) };
}

/** Applies the settings paths it owns (`owns`) to a running host. */
export interface LiveApplier {
  readonly owns: (path: string) => boolean;
  readonly apply: (settings: Settings) => Promise<void>;
}

/** A host's live settings: patches applied through its appliers, and the paths waiting for a restart. */
export interface LiveSettings {
  patch(patch: unknown): Promise<SettingsPatchResult>;
  /** Paths changed since start that apply after a restart. */
  restartNeeded(): readonly string[];
}

/** {@link applySettingsPatch} over `store` with `appliers` (each runs once per patch that changed a path it owns). */
export function createLiveSettings(store: SettingsStore, appliers: readonly LiveApplier[]): LiveSettings {
  const restart = new Set<string>();
  return {
    patch: (patch) =>
      applySettingsPatch(patch, {
        store,
        applyLive: async (changed, next) => {
          const failed: FieldError[] = [];
          for (const applier of appliers) {
            const owned = changed.filter(applier.owns);
            if (owned.length === 0) continue;
            await applier.apply(next).catch((error: unknown) => failed.push(...owned.map((path) => ({ path, message: (error as Error).message }))));
          }
          return failed;
        },
        needRestart: (changed) => {
          for (const path of changed) restart.add(path);
          return [...restart];
        },
      }),
    restartNeeded: () => [...restart],
  };
}
