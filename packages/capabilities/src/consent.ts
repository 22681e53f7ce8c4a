import { z } from 'zod';
import type { ApprovalBroker, ApprovalRequestInput } from './approvalBroker.js';
import type { ConsentCategory } from './contract.js';
import { formatArgsForDisplay } from './approvalSummary.js';
import { CapabilityError } from './errors.js';
import { askApproval } from './internal/askApproval.js';
import { hashInvocationArgs } from './internal/argsHash.js';
import type { Invocation, InvocationHook } from './pipeline.js';

/** Every consent category, in the order settings and `capnode consent list` show them. */
export const CONSENT_CATEGORIES: readonly ConsentCategory[] = ['screen', 'camera', 'microphone', 'location', 'files', 'computer', 'browser'];

/**
 * What the user decided for one category: `off` refuses every command of it (the default), `ask`
 * puts each call to the approval broker, `allow` runs them.
 */
export type ConsentMode = 'off' | 'ask' | 'allow';

export const consentModeSchema = z.enum(['off', 'ask', 'allow']);
export const consentCategorySchema = z.enum(['screen', 'camera', 'microphone', 'location', 'files', 'computer', 'browser']);

/** A command the user answered "allow always" for while its category was `ask`. */
export const consentGrantSchema = z.strictObject({ command: z.string().min(1), category: consentCategorySchema });
export type ConsentGrant = z.output<typeof consentGrantSchema>;

/** Most "allow always" grants kept. */
export const MAX_CONSENT_GRANTS = 256;

/**
 * zod schema of settings `consent`: a mode per category (each `off` by default) and `allowed`, the
 * commands answered "allow always" while their category was `ask` (they run without asking then;
 * `off` still refuses them: turning a category off wins).
 */
export const consentSettingsSchema = z.strictObject({
  screen: consentModeSchema.default('off'),
  camera: consentModeSchema.default('off'),
  microphone: consentModeSchema.default('off'),
  location: consentModeSchema.default('off'),
  files: consentModeSchema.default('off'),
  computer: consentModeSchema.default('off'),
  browser: consentModeSchema.default('off'),
  allowed: z.array(consentGrantSchema).max(MAX_CONSENT_GRANTS).default([]),
});
export type ConsentSettings = z.output<typeof consentSettingsSchema>;

/** Where the consent hook reads the user's decisions (on every call) and records "allow always". */
export interface ConsentStore {
  /** The current decisions; throwing refuses the call (settings that cannot be read grant nothing). */
  get(): ConsentSettings | Promise<ConsentSettings>;
  /** Records that `command` may use `category` without asking while the category is `ask`. */
  grant(grant: ConsentGrant): Promise<void>;
}

export interface ConsentHookOptions {
  readonly store: ConsentStore;
  /** The approval broker `ask` goes through: the same one exec approvals use. */
  readonly broker: ApprovalBroker;
}

/** Longest argument text a consent request shows. */
const MAX_SHOWN_ARGS = 1000;

/** The call's arguments as a consent request shows them ({@link formatArgsForDisplay}); escaped by whoever renders it. */
function describeArgs(args: unknown): string {
  return formatArgsForDisplay(args, { maxChars: MAX_SHOWN_ARGS });
}

/** The refusal for a category that is off, with the command that turns it on. */
export function consentOffError(command: string, category: ConsentCategory): CapabilityError {
  return new CapabilityError('consent_required', `${category} access is off: turn it on with \`capnode consent set ${category} ask\` (or allow)`, {
    data: { category, command, mode: 'off' },
  });
}

/** Adds a grant unless an equal one is there; the oldest grants go first beyond {@link MAX_CONSENT_GRANTS}. */
export function addConsentGrant(settings: ConsentSettings, grant: ConsentGrant): ConsentSettings {
  const same = (entry: ConsentGrant) => entry.category === grant.category && entry.command.toLowerCase() === grant.command.toLowerCase();
  if (settings.allowed.some(same)) return settings;
  return { ...settings, allowed: [...settings.allowed, grant].slice(-MAX_CONSENT_GRANTS) };
}

async function readSettings(store: ConsentStore, category: ConsentCategory, command: string): Promise<ConsentSettings> {
  try {
    return await store.get();
  } catch (error) {
    throw new CapabilityError('consent_required', `${command} needs ${category} access, and the consent settings cannot be read, so none is granted; fix the host settings (capnode consent list).`, {
      cause: error,
      data: { category, command },
    });
  }
}

/**
 * Creates the hook that enforces consent for every command with `consent` set, whatever transport
 * the call came by. The category's mode is read from `store` on every call:
 * - `off` (the default) refuses with `consent_required`, naming `capnode consent set <category> ask`;
 * - `ask` puts the command and its arguments to `broker` (pending in `capnode approvals`, the
 *   dashboard, and the calling client when it elicits): `allow-once` runs the call, `allow-always`
 *   also records a grant for that command and category (later calls run without asking while the
 *   category stays `ask`), `deny` refuses (`denied`), no answer in time refuses (`approval_timeout`);
 * - `allow` runs it.
 * A category switched `off` while its request was pending runs nothing. A command's `consentFor`
 * adds categories by its arguments (a clip with sound needs `microphone` too): every one must pass,
 * and the `ask` ones are put in one request.
 */
export function createConsentHook(options: ConsentHookOptions): InvocationHook {
  const { store, broker } = options;
  const enforce = {
    async beforeInvoke(invocation: Invocation) {
      const categories = consentCategoriesOf(invocation);
      if (categories.length === 0) return;
      const name = invocation.command.name;
      const settings = await readSettings(store, categories[0]!, name);
      const off = categories.find((category) => settings[category] !== 'allow' && settings[category] !== 'ask');
      if (off !== undefined) throw consentOffError(name, off);
      const granted = (category: ConsentCategory) => settings.allowed.some((grant) => grant.category === category && grant.command.toLowerCase() === name.toLowerCase());
      const asking = categories.filter((category) => settings[category] === 'ask' && !granted(category));
      if (asking.length === 0) return;
      const shown = describeArgs(invocation.args);
      const what = asking.join(' and ');
      const diff = await diffFor(invocation);
      const request: ApprovalRequestInput = {
        command: name,
        commandLine: `${name} ${shown}`,
        summary: `${name} asks for ${what} access with ${shown}`,
        argsHash: await hashInvocationArgs(name, { consent: asking.length === 1 ? asking[0] : asking, args: invocation.args }),
        ...(invocation.request.caller === undefined ? {} : { caller: invocation.request.caller }),
        ...(invocation.request.client === undefined ? {} : { client: invocation.request.client }),
        transport: invocation.request.transport,
        ...(diff === undefined ? {} : { diff }),
      };
      const decision = await askApproval(broker, request, `${name} (${what} access)`, invocation);
      const now = await readSettings(store, categories[0]!, name);
      const turnedOff = categories.find((category) => now[category] === 'off');
      if (turnedOff !== undefined) {
        throw new CapabilityError('consent_required', `${name} did not run: ${turnedOff} access was turned off while its request was pending.`, { data: { category: turnedOff, command: name, mode: 'off' } });
      }
      if (decision === 'allow-always') for (const category of asking) await store.grant({ command: name, category });
    },
  };
  // Most commands need no consent: decided at once, with no promise on their path.
  return { beforeInvoke: (invocation) => (consentCategoriesOf(invocation).length === 0 ? undefined : enforce.beforeInvoke(invocation)) };
}

/** The diff the call's approval shows; a refusal it finds refuses the call, any other failure shows no diff. */
async function diffFor(invocation: Invocation): Promise<string | undefined> {
  try {
    return await invocation.command.definition.approvalDiff?.(invocation.args, { signal: invocation.signal });
  } catch (error) {
    if (error instanceof CapabilityError) throw error;
    return undefined;
  }
}

/** Every category one call needs: the command's own, then those its arguments add (each once). */
function consentCategoriesOf(invocation: Invocation): ConsentCategory[] {
  const { consent, consentFor } = invocation.command.definition;
  const categories: ConsentCategory[] = consent === undefined ? [] : [consent];
  for (const category of consentFor?.(invocation.args) ?? []) if (!categories.includes(category)) categories.push(category);
  return categories;
}

/** A consent store in memory (tests, embedders without a settings file). */
export function createMemoryConsentStore(initial: Partial<ConsentSettings> = {}): ConsentStore & { set(category: ConsentCategory, mode: ConsentMode): void } {
  let current = consentSettingsSchema.parse(initial);
  return {
    get: () => current,
    async grant(grant) {
      current = addConsentGrant(current, grant);
    },
    set(category, mode) {
      current = { ...current, [category]: mode };
    },
  };
}
