import { homedir } from 'node:os';
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

