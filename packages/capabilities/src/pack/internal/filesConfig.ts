import { homedir } from 'node:os';
import { CapabilityError } from '../../errors.js';
import { createPathGuard, type PathGuard } from './fsGuard.js';

/** Options of {@link createFilesCapability} and {@link createEditorCapability}. */
export interface FilesOptions {
  /** Directories the commands may reach. Default: the user's home. */
  readonly roots?: readonly string[];
  /** capnode's config directory: never reachable, whatever `roots` say. */
  readonly configDir?: string;
  /** More directories never reachable. */
  readonly denied?: readonly string[];
  /** The user's home (for `~` and the default root). Default `os.homedir()`. */
  readonly home?: string;
}

/** The guard of one call: roots re-resolved each time, so a root created or removed since counts as it is now. */
export function guardOf(options: FilesOptions): Promise<PathGuard> {
  const home = options.home ?? homedir();
  const denied = [...(options.configDir === undefined ? [] : [options.configDir]), ...(options.denied ?? [])];
  const roots = (options.roots ?? [home]).map((root) => (root === '~' || root.startsWith('~/') ? `${home}${root.slice(1)}` : root));
  return createPathGuard({ roots, denied, home });
}

/** A file system error (`EACCES`, `EXDEV`, `ENOSPC`, …) as a `failed` result naming its code, never an internal error. */
export async function withErrnoFailures<T>(command: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (error instanceof CapabilityError || typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) throw error;
    throw new CapabilityError('failed', `${command} failed: ${code}.`, { cause: error, data: { reason: 'io_error', errno: code } });
  }
}
