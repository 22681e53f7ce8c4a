import type { Context } from '../context.js';
import { hostFailure } from '../errors.js';

/**
 * `capnode skill`: prints the capnode SKILL.md for agents, generated offline from the stock registry
 * and this config directory's settings.json (defaults when it is missing) — the skill the gateway node
 * publishes; docs/SKILL.md is the one for default settings.
 */
export async function skill(context: Context): Promise<number> {
  const [settingsModule, docs] = await Promise.all([import('@capnode/host/settings'), import('@capnode/host/docs')]);
  let settings: ReturnType<typeof settingsModule.loadSettings>;
  try {
    settings = settingsModule.loadSettings(context.paths.settings);
  } catch (error) {
    hostFailure(error, settingsModule);
  }
  context.out((await docs.stockSkillMarkdown(settings)).trimEnd());
  return 0;
}
