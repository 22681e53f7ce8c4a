import { constants, closeSync, fchmodSync, fstatSync, lstatSync, openSync, readFileSync, type Stats } from 'node:fs';

/**
 * Why a private file or directory (a token, a key, settings, the config directory) is not used:
 * - `symlink`: the path is a symbolic link (it could point anywhere, e.g. at another user's file);
 * - `not_regular`: a directory, FIFO or device where a file is expected (or a file where a directory is);
 * - `other_owner`: owned by another user;
 * - `exposed`: group or others have access (mode `& 0o077`), and the caller asked to refuse that.
 */
export type PrivateFileProblem = 'symlink' | 'not_regular' | 'other_owner' | 'exposed';

/** What to do with a file that group or others can access: refuse it (secrets), or narrow it to 0600/0700 and say so. */
export type ExposedFilePolicy = 'refuse' | 'fix';

export interface PrivateFileOptions {
  /** What the file is, for messages: `the MCP token`, `the device identity`, `settings`. */
  readonly label: string;
  /** Default `refuse`. */
  readonly exposed?: ExposedFilePolicy;
}

/** The outcome of {@link readPrivateFileSync} / {@link checkPrivateDirectorySync}; `message` names the file and the fix. */
export type PrivateFileCheck =
  | { readonly state: 'missing' }
  | { readonly state: 'ok'; readonly text: string; /** Set when the mode was narrowed; says from what. */ readonly fixed?: string }
  | { readonly state: 'insecure'; readonly problem: PrivateFileProblem; readonly message: string };

const posix = process.platform !== 'win32';

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}

function foreignOwner(stats: Stats): boolean {
  return posix && typeof process.getuid === 'function' && stats.uid !== process.getuid();
}

function insecure(problem: PrivateFileProblem, message: string): PrivateFileCheck {
  return { state: 'insecure', problem, message };
}

/**
 * Reads a private file without following a symbolic link (`O_NOFOLLOW`, checked on the open
 * descriptor, so the file cannot be swapped between check and read). Refuses a symlink, a
 * non-regular file and a file of another user; a file group or others can access is refused
 * (`exposed: 'refuse'`, the message gives the `chmod 600` fix) or narrowed to 0600 (`'fix'`).
 * Modes are not checked on Windows, where the profile's ACL protects the file.
 * I/O errors other than a missing file are thrown as they are.
 */
export function readPrivateFileSync(path: string, options: PrivateFileOptions): PrivateFileCheck {
  const { label } = options;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (posix ? constants.O_NOFOLLOW | constants.O_NONBLOCK : 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { state: 'missing' };
    if (code === 'ELOOP' || code === 'EMLINK') return insecure('symlink', symlinkMessage(label, path));
    throw error;
  }
  try {
    const stats = fstatSync(fd);
    if (!posix && lstatSync(path).isSymbolicLink()) return insecure('symlink', symlinkMessage(label, path));
    if (!stats.isFile()) return insecure('not_regular', `refusing to use ${label} ${path}: it is not a regular file; remove it (it is recreated when missing)`);
    if (foreignOwner(stats)) return insecure('other_owner', `refusing to use ${label} ${path}: it belongs to another user (uid ${stats.uid}); remove it, or run as the user who owns it`);
    let fixed: string | undefined;
    if (posix && (stats.mode & 0o077) !== 0) {
      if ((options.exposed ?? 'refuse') === 'refuse') {
        return insecure('exposed', `refusing to use ${label} ${path}: other users can access it (mode ${octal(stats.mode)}); make it private with: chmod 600 ${path}`);
      }
      fchmodSync(fd, 0o600);
      fixed = `${label} ${path} was accessible to other users (mode ${octal(stats.mode)}); narrowed it to 0600`;
    }
    const text = readFileSync(fd, 'utf8');
    return fixed === undefined ? { state: 'ok', text } : { state: 'ok', text, fixed };
  } finally {
    closeSync(fd);
  }
}

function symlinkMessage(label: string, path: string): string {
  return `refusing to use ${label} ${path}: it is a symbolic link; replace it with a regular file (or remove it to have it recreated)`;
}

/**
 * Checks a private directory (the config directory, `run/`): not a symlink, a directory, owned by
 * this user; a mode that lets group or others in is narrowed to 0700 (`fixed` says so) unless
 * `exposed: 'refuse'`. `text` is empty.
 */
export function checkPrivateDirectorySync(path: string, options: PrivateFileOptions): PrivateFileCheck {
  const { label } = options;
  let stats: Stats;
  try {
    stats = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'missing' };
    throw error;
  }
  const symlink = () => insecure('symlink', `refusing to use ${label} ${path}: it is a symbolic link; point CAPNODE_HOME at the real directory instead`);
  if (stats.isSymbolicLink()) return symlink();
  if (!stats.isDirectory()) return insecure('not_regular', `refusing to use ${label} ${path}: it is not a directory`);
  if (!posix) return { state: 'ok', text: '' };
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return symlink();
    if (code === 'ENOENT') return { state: 'missing' };
    throw error;
  }
  try {
    const opened = fstatSync(fd);
    if (foreignOwner(opened)) return insecure('other_owner', `refusing to use ${label} ${path}: it belongs to another user (uid ${opened.uid})`);
    if ((opened.mode & 0o077) === 0) return { state: 'ok', text: '' };
    if (options.exposed === 'refuse') {
      return insecure('exposed', `refusing to use ${label} ${path}: other users can access it (mode ${octal(opened.mode)}); make it private with: chmod 700 ${path}`);
    }
    fchmodSync(fd, 0o700);
    return { state: 'ok', text: '', fixed: `${label} ${path} was accessible to other users (mode ${octal(opened.mode)}); narrowed it to 0700` };
  } finally {
    closeSync(fd);
  }
}
