import { CONSENT_CATEGORIES, type ConsentCategory, type ConsentMode } from '@capnode/capabilities';
import type { Context } from '../context.js';
import { CliError, hostFailure } from '../errors.js';

const USAGE = `usage: capnode consent list | set <${CONSENT_CATEGORIES.join('|')}> <off|ask|allow>`;
const MODES: readonly ConsentMode[] = ['off', 'ask', 'allow'];

const MEANING: Readonly<Record<ConsentMode, string>> = {
  off: 'refused (consent_required)',
  ask: 'asks through the approvals (capnode approvals, the dashboard, the client)',
  allow: 'runs without asking',
};

async function openStore(context: Context) {
  const module = await import('@capnode/host/settings');
  try {
    return { module, store: module.createSettingsStore(context.paths.settings) };
  } catch (error) {
    hostFailure(error, module);
  }
}

/**
 * `capnode consent list | set <category> <mode>`: what commands may see or hear of the user. The
 * setting is read on every call, so a running host applies a change to its next call.
 */
export async function consent(context: Context): Promise<number> {
  const [, action, category, mode, extra] = context.args.positionals;
  if (action === undefined || action === 'list') {
    if (category !== undefined) throw new CliError('usage', `unexpected argument '${category}' — ${USAGE}`);
    const { store } = await openStore(context);
    const settings = store.get().consent;
    if (context.json) {
      context.out(JSON.stringify(settings, null, 2));
      return 0;
    }
    for (const name of CONSENT_CATEGORIES) context.out(`${name.padEnd(11)} ${settings[name].padEnd(6)} ${MEANING[settings[name]]}`);
    if (settings.allowed.length) {
      context.out('allowed always (while the category is ask):');
      for (const grant of settings.allowed) context.out(`  ${grant.command} (${grant.category})`);
    }
    return 0;
  }
  if (action !== 'set') throw new CliError('usage', `unknown action '${action}' — ${USAGE}`);
  if (extra !== undefined) throw new CliError('usage', `unexpected argument '${extra}' — ${USAGE}`);
  if (!CONSENT_CATEGORIES.includes(category as ConsentCategory)) throw new CliError('usage', `unknown consent category '${category ?? ''}': one of ${CONSENT_CATEGORIES.join(', ')} — ${USAGE}`);
  if (!MODES.includes(mode as ConsentMode)) throw new CliError('usage', `unknown consent mode '${mode ?? ''}': off, ask or allow — ${USAGE}`);
  const { module, store } = await openStore(context);
  try {
    await store.update((settings) => ({ ...settings, consent: { ...settings.consent, [category as ConsentCategory]: mode as ConsentMode } }));
  } catch (error) {
    hostFailure(error, module);
  }
  context.out(`${category} access: ${mode} — ${MEANING[mode as ConsentMode]}`);
  return 0;
}
