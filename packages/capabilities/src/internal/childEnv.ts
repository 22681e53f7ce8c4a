import { isRefusedEnvKey } from '../envPolicy.js';
import { CapabilityError } from '../errors.js';

/**
 * Merges caller variables over `base` for a child process. On Windows names are case-insensitive,
 * so an override replaces every differently-cased copy.
 *
 * @throws CapabilityError `invalid_arguments` for refused keys ({@link isRefusedEnvKey}) and for names or values a process environment cannot hold.
 */
export function buildChildEnv(base: NodeJS.ProcessEnv, overrides: Readonly<Record<string, string>> | undefined, windows: boolean): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  if (!overrides) return env;
  const refused = Object.keys(overrides).filter(isRefusedEnvKey);
  if (refused.length) {
    throw new CapabilityError(
      'invalid_arguments',
      `env may not set ${refused.join(', ')}: these variables make programs load other code (NODE_OPTIONS, LD_*, DYLD_*, BASH_ENV and the like are refused).`,
    );
  }
  for (const [key, value] of Object.entries(overrides)) {
    if (!key || key.includes('=') || key.includes('\0')) throw new CapabilityError('invalid_arguments', `env has an invalid variable name '${key.replace(/\0/g, '\\0')}'.`);
    if (value.includes('\0')) throw new CapabilityError('invalid_arguments', `env value of ${key} contains a NUL character.`);
    if (windows) {
      const upper = key.toUpperCase();
      for (const existing of Object.keys(env)) if (existing.toUpperCase() === upper) delete env[existing];
    }
    env[key] = value;
  }
  return env;
}
