import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';

/** Where and how to look a program up. */
export interface FindExecutableOptions {
  /** Base for programs given as relative paths (`./build.sh`). Default: the process's cwd. */
  readonly cwd?: string;
  /** Environment whose PATH (and PATHEXT on Windows) is searched. Default: `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  readonly platform?: NodeJS.Platform;
}

const DEFAULT_PATHEXT = '.COM;.EXE;.BAT;.CMD';

/** Reads an environment variable, case-insensitively on Windows (`Path` vs `PATH`). */
function readEnv(env: NodeJS.ProcessEnv, key: string, windows: boolean): string | undefined {
  if (!windows) return env[key];
  const upper = key.toUpperCase();
  for (const [name, value] of Object.entries(env)) if (name.toUpperCase() === upper) return value;
  return undefined;
}

async function isExecutableFile(file: string, windows: boolean): Promise<boolean> {
  try {
    const info = await stat(file);
    if (!info.isFile()) return false;
    if (!windows) await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds the absolute path of a program the way a shell would, without running one.
 *
 * A name with a path separator is taken relative to `cwd`. A bare name is searched in PATH, whose
 * empty and relative entries are skipped (they would make the current directory part of the search);
 * on Windows the PATHEXT extensions are tried too, and the current directory is never searched.
 * Returns `undefined` when nothing executable is found.
 */
export async function findExecutable(program: string, options: FindExecutableOptions = {}): Promise<string | undefined> {
  const platform = options.platform ?? process.platform;
  const windows = platform === 'win32';
  const paths = windows ? path.win32 : path.posix;
  const env = options.env ?? process.env;
  if (!program || program.includes('\0')) return undefined;
  const extensions = windows
    ? (readEnv(env, 'PATHEXT', true) || DEFAULT_PATHEXT)
        .split(';')
        .map((ext) => ext.trim())
        .filter((ext) => ext.startsWith('.'))
    : [];
  const candidates = (base: string): string[] => {
    if (!windows) return [base];
    const hasKnownExtension = extensions.some((ext) => base.toLowerCase().endsWith(ext.toLowerCase()));
    return hasKnownExtension ? [base] : extensions.map((ext) => base + ext.toLowerCase());
  };
  const hasSeparator = program.includes('/') || (windows && program.includes('\\'));
  if (hasSeparator) {
    const base = paths.resolve(options.cwd ?? process.cwd(), program);
    for (const candidate of candidates(base)) if (await isExecutableFile(candidate, windows)) return candidate;
    return undefined;
  }
  const searchPath = readEnv(env, 'PATH', windows) ?? '';
  for (const directory of searchPath.split(paths.delimiter)) {
    const dir = windows ? directory.replace(/^"(.*)"$/, '$1') : directory;
    if (!dir || !paths.isAbsolute(dir)) continue;
    for (const candidate of candidates(paths.join(dir, program))) if (await isExecutableFile(candidate, windows)) return candidate;
  }
  return undefined;
}
