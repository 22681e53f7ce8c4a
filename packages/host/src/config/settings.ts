import { lstatSync } from 'node:fs';
import { z } from 'zod';
import { addConsentGrant, consentSettingsSchema, execApprovalPolicySchema, type ConsentStore, type ExecApprovalPolicy, type ExecApprovalStore } from '@capnode/capabilities';
import { isLoopbackHost, isPlainObject } from '@capnode/toolkit';
import { writePrivateFileAtomic } from '@capnode/toolkit/node';
import { HostError } from '../errors.js';
import { acquireSettingsLock } from '../locks/settingsLock.js';
import { readConfigFile } from '../files/secureFile.js';
import { mcpClientSettingsSchema } from './mcpClientSettings.js';
import { DEFAULT_MCP_HOST, DEFAULT_MCP_PORT } from './paths.js';

export type { HostErrorCode } from '../errors.js';
export { HostError, isHostError } from '../errors.js';
export type { McpClientSettings, McpServerEntry, McpClientSetup } from './mcpClientSettings.js';
export {
  DEFAULT_MCP_CLIENT_AGENT,
  mcpClientSettingsSchema,
  resolveMcpClientSettings,
  mcpServerEntries,
  addMcpServers,
  removeMcpServer,
  setMcpReexport,
} from './mcpClientSettings.js';

const GATEWAY_URL = /^wss?:\/\/[^\s/]+/i;

/** zod schema of `settings.json`; every field has a default, unknown keys are errors (typos show). */
export const settingsSchema = z.strictObject({
  $schema: z.string().optional(),
  mcp: z
    .strictObject({
      /** Run the local MCP HTTP listener. */
      enabled: z.boolean().default(true),
      /** Loopback address to bind; the listener never serves other interfaces. */
      host: z.string().refine(isLoopbackHost, 'must be a loopback address (127.0.0.1, ::1 or localhost)').default(DEFAULT_MCP_HOST),
      port: z.int().min(0).max(65535).default(DEFAULT_MCP_PORT),
      /** Requests handled at once; more get 503 with Retry-After. */
      maxConcurrency: z.int().min(1).max(1024).default(16),
      /**
       * How `tools/list` spells command names for a connection that selects none: `dotted` as
       * registered (`system.run`), or `underscore` (`system_run`) for OpenAI-style harnesses. A client
       * selects its own with `?toolNames=` on the URL (or `capnode mcp --tool-names`); calls accept both.
       */
      toolNames: z.enum(['dotted', 'underscore'], { error: "must be 'dotted' or 'underscore'" }).default('dotted'),
    })
    .prefault({}),
  /** The gateway node: this machine's connection to an OpenClaw gateway (called `node` before; an old file is read and rewritten, see {@link parseSettings}). */
  gateway: z
    .strictObject({
      /** Connect to an OpenClaw gateway as a gateway node (independent of `mcp.enabled`). */
      enabled: z.boolean().default(false),
      /** The gateway's WebSocket URL, e.g. `ws://127.0.0.1:18789`. */
      url: z.string().regex(GATEWAY_URL, 'must be a ws:// or wss:// URL, e.g. ws://127.0.0.1:18789').optional(),
      /** The gateway's shared token (a secret: this file is written 0600; `CAPNODE_GATEWAY_TOKEN` overrides it). */
      token: z.string().min(1).optional(),
      /**
       * Which imported MCP servers (`mcpClient.servers` names) the gateway node publishes to the gateway's
       * agents as node-hosted MCP tools: `"all"` or a list of names; none when absent. Applies live.
       */
      publishServers: z.union([z.literal('all'), z.array(z.string().min(1).max(128)).max(256)]).optional(),
    })
    .prefault({}),
  channel: z
    .strictObject({
      /** Serve the gateway channel tools (conversations, events, approvals) through the local MCP server; uses `gateway.url`/`gateway.token`. */
      enabled: z.boolean().default(false),
    })
    .prefault({}),
  /**
   * OpenAgent's client capabilities: this machine as the capability host an OpenAgent server calls over
   * `client-capabilities/1`. `enabled` is the one device-level consent switch (`capnode openagent enable`).
   */
  openagent: z
    .strictObject({
      /** The consent switch: connect and serve calls. Off by default; turning it off closes the channel and cancels running calls. */
      enabled: z.boolean().default(false),
      /** The capability WebSocket, e.g. `ws://127.0.0.1:<port>/ws/capabilities` (a loopback proxy or bridge). */
      url: z.string().regex(GATEWAY_URL, 'must be a ws:// or wss:// URL, e.g. ws://127.0.0.1:8765/ws/capabilities').optional(),
      /** HTTP headers of the WebSocket handshake (secrets like the gateway token: masked, never logged). */
      headers: z.record(z.string().min(1).max(256), z.string().min(1).max(8192)).default({}),
      /** The device id the server must acknowledge (`capability_hello_ack.device_id`). */
      deviceId: z.string().min(1).max(200).optional(),
      /** The account calls must come from (`account_id`); another one closes the channel. */
      accountId: z.string().min(1).max(200).optional(),
      /** The network id, when the server has one. */
      networkId: z.string().min(1).max(200).optional(),
      /** The label the server shows for this machine; the host name when absent. */
      deviceLabel: z.string().min(1).max(200).optional(),
      /** Heartbeat interval in ms (desktop default 15 000; honoured down to 1000). */
      heartbeatMs: z.int().min(1000).max(600_000).default(15_000),
      /** Which catalog servers are offered: `all`, or names (`capnode` and imported servers). */
      servers: z.union([z.literal('all'), z.array(z.string().min(1).max(200)).max(128)]).default('all'),
    })
    .prefault({}),
  execApprovals: execApprovalPolicySchema.strict().prefault({}),
  /** How pending approvals reach the person who answers them (see README "How to answer approvals"). */
  approvals: z
    .strictObject({
      /**
       * How a call waits for its approval: `block` waits; `return` answers at once with
       * `approval_pending` and runs an identical retry once allowed; `auto` blocks when the caller
       * sent a progress token, declared elicitation, or is the CLI or a gateway, and otherwise holds
       * the call for `holdMs` before it returns.
       */
      wait: z.enum(['auto', 'block', 'return']).default('auto'),
      /**
       * Put the question to the user through the calling MCP client too, when it declared elicitation.
       * The client application then answers (allow once or deny), so this trusts it to show the question.
       */
      elicit: z.boolean().default(true),
      /** Show a desktop notification (system.notify's backends) for each new pending approval. */
      notify: z.boolean().default(true),
      /** How often a waiting call reports progress, in ms (at most 10 s, so 60 s client timeouts that reset on progress never fire). */
      progressIntervalMs: z.int().min(100).max(10_000).default(5_000),
      /**
       * With `wait: auto`, how long a call from a client that cannot show progress waits for its answer
       * before it returns `approval_pending`, in ms (default 45 s: under the 60 s timeout most clients use).
       */
      holdMs: z.int().min(0).max(600_000).default(45_000),
    })
    .prefault({}),
  /** The host's web dashboard, on its own loopback listener (open it with `capnode ui`). */
  dashboard: z
    .strictObject({
      /** Serve the dashboard while the host runs. */
      enabled: z.boolean().default(true),
      /** Loopback port; 0 (default) picks a free one, published in `host.json` and the status. */
      port: z.int().min(0).max(65535).default(0),
    })
    .prefault({}),
  /** MCP servers whose tools capnode imports (see {@link mcpClientSettingsSchema}); absent means none. */
  mcpClient: mcpClientSettingsSchema.optional(),
  /**
   * What commands may see, hear or drive of the user: `screen`, `camera`, `microphone`, `location`,
   * `files`, `computer`, `browser`, each `off` (default), `ask` (through the approval broker) or `allow`; `allowed` lists the commands
   * answered "allow always" while their category was `ask`.
   */
  consent: consentSettingsSchema.prefault({}),
  /** Plugins the host loads: absolute paths of ES module files or folders, or package names installed in `<config dir>/plugins`. */
  plugins: z.array(z.string().min(1)).max(256).default([]),
  /** Each plugin's own settings section, by plugin name (`PluginContext.settings`). */
  pluginSettings: z.record(z.string(), z.record(z.string(), z.unknown())).default({}),
});

/** The validated settings, defaults filled in. */
export type Settings = z.output<typeof settingsSchema>;

/** Settings with every default, what a missing `settings.json` means. */
export function defaultSettings(): Settings {
  return settingsSchema.parse({});
}

/** Most problems listed in one message. */
const MAX_LISTED_ISSUES = 20;

function describeIssues(error: z.ZodError): string {
  const listed = error.issues
    .slice(0, MAX_LISTED_ISSUES)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`);
  const more = error.issues.length - listed.length;
  return `${listed.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

/** The key the `gateway` section had before it was renamed (it is still read, then rewritten). */
const LEGACY_GATEWAY_KEY = 'node';

/** `value` with an old `node` section read as `gateway` (`gateway` wins when both are present), and a note saying so. */
function migrateLegacyKeys(value: unknown, path: string): { value: unknown; note?: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, LEGACY_GATEWAY_KEY)) return { value };
  const { [LEGACY_GATEWAY_KEY]: legacy, ...rest } = value as Record<string, unknown>;
  if (Object.hasOwn(rest, 'gateway')) {
    return { value: rest, note: `${path} has both "gateway" and the old "node" section: "gateway" is used, and "node" is dropped when the settings are next saved` };
  }
  return { value: { ...rest, gateway: legacy }, note: `${path}: the "node" section is now called "gateway" (same fields); it is read as "gateway" and saved under that name from now on` };
}

/** Whether settings text still has a section under an old name (`node`, now `gateway`); unreadable text has none. */
function hasLegacyKeys(text: string | undefined): boolean {
  if (text === undefined) return false;
  try {
    return migrateLegacyKeys(text.trim() === '' ? {} : JSON.parse(text), '').note !== undefined;
  } catch {
    return false;
  }
}

/** Options of {@link parseSettings}. */
export interface ParseSettingsOptions {
  /** Told when the text uses an old key (`node`, now `gateway`); the value is read under the new one. */
  readonly onWarning?: (message: string) => void;
}

/**
 * Validates settings text read from `path`. A problem is a {@link HostError} `invalid_settings`
 * naming the file and the path of the bad value, e.g. `mcp.port: Too big: expected number to be <=65535`.
 * An old `node` section is read as `gateway` (both present: `gateway` wins) and `onWarning` says so;
 * its problems are named under `gateway.`.
 */
export function parseSettings(text: string, path: string, options: ParseSettingsOptions = {}): Settings {
  let value: unknown;
  try {
    value = text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    throw new HostError('invalid_settings', `${path} is not valid JSON (${(error as Error).message}); fix it, or delete it to start from the defaults`, { cause: error });
  }
  const migrated = migrateLegacyKeys(value, path);
  if (migrated.note !== undefined) options.onWarning?.(migrated.note);
  const parsed = settingsSchema.safeParse(migrated.value);
  if (!parsed.success) {
    throw new HostError('invalid_settings', `${path} has invalid settings: ${describeIssues(parsed.error)}; fix the file, or delete it to start from the defaults`, { cause: parsed.error });
  }
  return parsed.data;
}

export interface LoadSettingsOptions {
  /** Told when the file was readable by group or others and was narrowed to 0600 (it can hold the gateway token), and when it uses an old key (see {@link parseSettings}). */
  readonly onWarning?: (message: string) => void;
}

/**
 * Reads and validates `settings.json`; a missing file means the defaults. Never follows a symlink:
 * a symlinked, non-regular or another user's file is a {@link HostError} `insecure_file`. A file
 * others can read is narrowed to 0600 (it may hold `gateway.token`) and `onWarning` says so.
 */
export function loadSettings(path: string, options: LoadSettingsOptions = {}): Settings {
  const text = readConfigFile(path, 'the settings file', 'fix', options.onWarning);
  return text === undefined ? defaultSettings() : parseSettings(text, path, options.onWarning ? { onWarning: options.onWarning } : {});
}

/** The live settings of a host, persisted to `settings.json`. */
export interface SettingsStore {
  /** The settings as last loaded or written. */
  get(): Settings;
  /**
   * Applies `change` to the settings on disk (re-read first, so edits made meanwhile are kept),
   * validates the result and writes it atomically with mode 0600. Updates run one at a time, across
   * processes too: the read-modify-write holds `<settings.json>.lock` (see {@link SettingsStoreOptions}).
   * @throws HostError `invalid_settings` when the file on disk or the result is invalid; nothing is written then.
   * @throws HostError `settings_locked` when another process held the lock past `lockTimeoutMs`; nothing is written then.
   */
  update(change: (current: Settings) => Settings, options?: SettingsUpdateOptions): Promise<Settings>;
  /** Re-reads the file. */
  reload(): Settings;
  /**
   * Which version of the file is on disk now (its identity and timestamps; every atomic write changes
   * it), for what must not outlive a change of policy: answers kept for a retry.
   */
  revision(): string;
  /**
   * Rewrites the file in the current form when it still uses an old key (`node`, now `gateway`),
   * the way {@link update} writes; resolves whether it wrote. The host runs it once it has the settings.
   */
  migrate(options?: SettingsUpdateOptions): Promise<boolean>;
  /** The exec approval policy as an {@link ExecApprovalStore} (re-read on a `get` after the file changed). */
  readonly execApprovals: ExecApprovalStore;
  /** The consent decisions as a {@link ConsentStore} (re-read on a `get` after the file changed, so `capnode consent set` applies to the next call). */
  readonly consent: ConsentStore;
  readonly path: string;
}

/** Options of {@link SettingsStore.update}. */
export interface SettingsUpdateOptions {
  /** Aborting it ends a wait for another process's settings lock (HostError `aborted`); nothing is written then. */
  readonly signal?: AbortSignal;
}

/** Options of {@link createSettingsStore}. */
export interface SettingsStoreOptions extends LoadSettingsOptions {
  /**
   * How long an update waits while another process holds `<settings.json>.lock`, in ms (default 5000);
   * then it fails with HostError `settings_locked` naming the lock and the pid holding it.
   */
  readonly lockTimeoutMs?: number;
  /** A lock older than this (ms, default 30000) is stale and taken over even when its pid runs (a reused pid); one whose pid is gone always is. */
  readonly staleLockMs?: number;
}

/** Timestamps closer than this to the moment they were seen may be followed by a write with the same ones. */
const TIMESTAMP_GRANULARITY_MS = 1000n;

/**
 * What `lstat` says of `path`, as one string: any write, rename, chmod or chown changes it. Undefined
 * while the file's timestamps are too recent to tell a later write in the same clock tick apart.
 */
/** `lstat`'s identity and timestamps of `path` (`missing`, or `unreadable` when lstat fails). */
function fileRevision(path: string): string {
  try {
    const stat = lstatSync(path, { bigint: true, throwIfNoEntry: false });
    return stat === undefined ? 'missing' : [stat.dev, stat.ino, stat.mode, stat.size, stat.mtimeNs, stat.ctimeNs].join(':');
  } catch {
    return 'unreadable';
  }
}

function fileSignature(path: string): string | undefined {
  let stat;
  try {
    stat = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined; // the read that follows reports what is wrong
  }
  if (stat === undefined) return 'missing';
  const newest = stat.mtimeNs > stat.ctimeNs ? stat.mtimeNs : stat.ctimeNs;
  if (BigInt(Date.now()) * 1_000_000n - newest < TIMESTAMP_GRANULARITY_MS * 1_000_000n) return undefined;
  return [stat.dev, stat.ino, stat.mode, stat.uid, stat.size, stat.mtimeNs, stat.ctimeNs].join(':');
}

/** Deep equality of JSON values (settings hold only JSON). */
function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * What to write so that the file means `after`: the file's own text (`raw`) with only what differs
 * between what it meant (`before`) and `after` written into it, so defaults the user never set stay
 * out of the file and keep following capnode's defaults.
 */
function sparseUpdate(raw: unknown, before: unknown, after: unknown): unknown {
  if (!isPlainObject(before) || !isPlainObject(after)) return after;
  const out: Record<string, unknown> = isPlainObject(raw) ? { ...raw } : {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (!Object.hasOwn(after, key)) delete out[key];
    else if (!sameJson(before[key], after[key]) || !Object.hasOwn(before, key)) out[key] = sparseUpdate(out[key], before[key], after[key]);
  }
  return out;
}

/**
 * Validates `change` applied to the file at `path` and writes the result atomically (0600), keeping
 * the file sparse (see {@link sparseUpdate}); an old `node` section is rewritten as `gateway`.
 * Returns the settings written.
 */
async function writeUpdate(path: string, change: (current: Settings) => Settings, loadOptions: LoadSettingsOptions): Promise<Settings> {
  const text = readConfigFile(path, 'the settings file', 'fix', loadOptions.onWarning);
  const before = text === undefined ? defaultSettings() : parseSettings(text, path, loadOptions.onWarning ? { onWarning: loadOptions.onWarning } : {});
  const next = settingsSchema.safeParse(change(before));
  if (!next.success) throw new HostError('invalid_settings', `refusing to write invalid settings to ${path}: ${describeIssues(next.error)}`, { cause: next.error });
  const raw = text === undefined || text.trim() === '' ? {} : migrateLegacyKeys(JSON.parse(text), path).value;
  let value: unknown = sparseUpdate(raw, before, next.data);
  // The sparse form must mean exactly the settings validated; when it would not, the whole settings are written.
  const reread = settingsSchema.safeParse(value);
  if (!reread.success || !sameJson(reread.data, next.data)) value = next.data;
  try {
    await writePrivateFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
  } catch (error) {
    throw new HostError('io', `cannot write ${path}: ${(error as Error).message}`, { cause: error });
  }
  return next.data;
}

/** Creates the settings store over `path`, loading it now (throws on a bad or insecure file; see {@link loadSettings}). */
export function createSettingsStore(path: string, options: SettingsStoreOptions = {}): SettingsStore {
  // Each distinct warning once per store: an old key is reported on the first read, not on every re-read.
  const warned = new Set<string>();
  const onWarning = options.onWarning;
  const loadOptions: LoadSettingsOptions = onWarning
    ? {
        onWarning: (message) => {
          if (warned.has(message)) return;
          warned.add(message);
          onWarning(message);
        },
      }
    : {};
  const load = () => loadSettings(path, loadOptions);
  let current: Settings;
  let queue: Promise<unknown> = Promise.resolve();
  // The file as it was when `current` was read: per-call readers (consent, exec approvals) re-read only once it differs.
  let loadedAs: string | undefined;
  const reload = () => {
    loadedAs = undefined;
    const seen = fileSignature(path);
    current = load();
    loadedAs = seen;
    return current;
  };
  const fresh = () => (loadedAs !== undefined && fileSignature(path) === loadedAs ? current : reload());
  reload();

  const store: SettingsStore = {
    path,
    get: () => current,
    reload,
    revision: () => fileRevision(path),
    update(change, updateOptions = {}) {
      const run = queue.then(async () => {
        const release = await acquireSettingsLock(path, {
          ...(options.lockTimeoutMs === undefined ? {} : { timeoutMs: options.lockTimeoutMs }),
          ...(options.staleLockMs === undefined ? {} : { staleMs: options.staleLockMs }),
          ...(updateOptions.signal ? { signal: updateOptions.signal } : {}),
        });
        try {
          current = await writeUpdate(path, change, loadOptions);
        } finally {
          release();
        }
        loadedAs = undefined;
        return current;
      });
      queue = run.catch(() => undefined);
      return run;
    },
    async migrate(updateOptions = {}) {
      if (!hasLegacyKeys(readConfigFile(path, 'the settings file', 'fix'))) return false;
      await store.update((settings) => settings, updateOptions);
      return true;
    },
    consent: {
      get: () => fresh().consent,
      async grant(grant) {
        await store.update((settings) => ({ ...settings, consent: addConsentGrant(settings.consent, grant) }));
      },
    },
    execApprovals: {
      get(): ExecApprovalPolicy {
        return fresh().execApprovals;
      },
      async set(policy) {
        await store.update((settings) => ({ ...settings, execApprovals: { mode: policy.mode, allowlist: [...policy.allowlist] } }));
      },
      async update(change) {
        // Read-modify-write inside the settings queue: a change applies to the policy current at that moment.
        const next = await store.update((settings) => {
          const policy = change(settings.execApprovals);
          return { ...settings, execApprovals: { mode: policy.mode, allowlist: [...policy.allowlist] } };
        });
        return next.execApprovals;
      },
    },
  };
  return store;
}
