import { CapabilityError } from '../errors.js';

/** Host variables every child inherits (POSIX); everything else of the host's environment stays behind. */
const POSIX_BASE_KEYS = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'TZ', 'TMPDIR'];
/** The same on Windows, where programs also need these to start at all. */
const WINDOWS_BASE_KEYS = [
  'PATH', 'PATHEXT', 'SYSTEMROOT', 'SYSTEMDRIVE', 'WINDIR', 'COMSPEC', 'TEMP', 'TMP', 'USERPROFILE', 'USERNAME', 'USERDOMAIN',
  'HOMEDRIVE', 'HOMEPATH', 'APPDATA', 'LOCALAPPDATA', 'PROGRAMDATA', 'ALLUSERSPROFILE', 'PUBLIC', 'PROGRAMFILES', 'PROGRAMFILES(X86)',
  'PROGRAMW6432', 'COMMONPROGRAMFILES', 'COMMONPROGRAMFILES(X86)', 'COMMONPROGRAMW6432', 'COMPUTERNAME', 'OS', 'NUMBER_OF_PROCESSORS',
  'PROCESSOR_ARCHITECTURE', 'LANG', 'TZ',
];

/** The host variables a child starts from: {@link POSIX_BASE_KEYS} and `LC_*`, or the Windows set (case-insensitive). */
export function isBaseEnvKey(key: string, windows: boolean): boolean {
  if (windows) return WINDOWS_BASE_KEYS.includes(key.toUpperCase());
  return POSIX_BASE_KEYS.includes(key) || key.startsWith('LC_');
}

/**
 * The environment of a child process: a fixed minimal set of the host's variables (PATH, HOME,
 * USER, LOGNAME, SHELL, LANG, LC_*, TERM, TZ, TMPDIR; on Windows SYSTEMROOT, COMSPEC, PATHEXT,
 * WINDIR, TEMP, TMP, USERPROFILE, APPDATA, LOCALAPPDATA, PROGRAMFILES, …), then the caller's
 * variables over it. Host secrets (tokens in the host's environment) never reach the child. On
 * Windows names are case-insensitive, so an override replaces every differently-cased copy.
 *
 * Which caller variables may be set at all is the exec policy's decision, made before this runs.
 *
 * @throws CapabilityError `invalid_arguments` for names or values a process environment cannot hold.
 */
export function buildChildEnv(base: NodeJS.ProcessEnv, overrides: Readonly<Record<string, string>> | undefined, windows: boolean): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) if (value !== undefined && isBaseEnvKey(key, windows)) env[key] = value;
  if (!overrides) return env;
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
