import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { PluginLoadError } from './pluginsLoad.js';

/** Most files and folders of a plugin package checked before its import (a larger package is refused, not half-checked). */
export const MAX_PLUGIN_CHECKED_ENTRIES = 20_000;

const STICKY = 0o1000;

/** Who may change files: this user, and root (who can change them anyway). */
function trustedOwner(uid: number, self: number): boolean {
  return uid === self || uid === 0;
}

function selfName(self: number): string {
  try {
    return userInfo().username || String(self);
  } catch {
    return String(self);
  }
}

function octal(mode: number): string {
  return `0${(mode & 0o7777).toString(8).padStart(3, '0')}`;
}

/** What is wrong with `path` (one of the plugin's own files or folders): owned by another user, or writable by group or others. */
function ownProblem(path: string, stat: Stats, self: number): string | undefined {
  const what = stat.isDirectory() ? 'plugin folder' : 'plugin file';
  if (!trustedOwner(stat.uid, self)) {
    return `${what} ${path} is owned by uid ${stat.uid}, not by you: that user could change the code capnode runs; fix: chown ${selfName(self)} ${path} (or remove it from the plugins)`;
  }
  const writers = [stat.mode & 0o020 ? 'group' : '', stat.mode & 0o002 ? 'others' : ''].filter(Boolean);
  if (writers.length) {
    return `${what} ${path} is writable by ${writers.join(' and ')} (mode ${octal(stat.mode)}): they could change the code capnode runs; fix: chmod go-w ${path}`;
  }
  return undefined;
}

/** What is wrong with `path`, a folder the plugin lies in: another user's, or writable by group or others without the sticky bit. */
function ancestorProblem(path: string, stat: Stats, self: number): string | undefined {
  if (!trustedOwner(stat.uid, self)) {
    return `the folder ${path}, which holds a plugin, is owned by uid ${stat.uid}, not by you: that user could replace the plugin; fix: chown ${selfName(self)} ${path}, or move the plugin elsewhere`;
  }
  if (stat.mode & 0o022 && !(stat.mode & STICKY)) {
    const writers = [stat.mode & 0o020 ? 'group' : '', stat.mode & 0o002 ? 'others' : ''].filter(Boolean).join(' and ');
    return `the folder ${path}, which holds a plugin, is writable by ${writers} without the sticky bit (mode ${octal(stat.mode)}): they could replace the plugin; fix: chmod go-w ${path} (or chmod +t ${path}), or move the plugin elsewhere`;
  }
  return undefined;
}

/** Every file and folder under `root` (itself included; `node_modules` and symlinks not followed), bounded. */
function walk(root: string, visit: (path: string, stat: Stats) => void): void {
  const stack = [root];
  let seen = 0;
  while (stack.length) {
    const path = stack.pop()!;
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) continue;
    if (++seen > MAX_PLUGIN_CHECKED_ENTRIES) throw new PluginLoadError('unsafe_permissions', `${root} holds more than ${MAX_PLUGIN_CHECKED_ENTRIES} files (node_modules aside); its permissions were not checked, so it is not loaded`);
    visit(path, stat);
    if (stat.isDirectory()) for (const name of readdirSync(path)) if (name !== 'node_modules') stack.push(join(path, name));
  }
}

/**
 * Refuses a plugin that someone else could change before capnode imports it: its files and folders
 * (the module file, or the package folder without `node_modules`, and the entry file) must belong to
 * this user (or root) and be writable by neither group nor others; every folder above them, up to
 * `/`, must belong to this user or root and be writable by group or others only with the sticky bit
 * (as `/tmp`). Checked on the real paths (symlinks resolved). Runs on POSIX only.
 * @param root what the plugin source names: the module file, or the package folder.
 * @param file the entry file that is imported.
 * @throws PluginLoadError `unsafe_permissions` naming the path and the `chmod`/`chown` fix.
 */
export function checkPluginPermissions(root: string, file: string, self: number | undefined = process.getuid?.()): void {
  if (self === undefined) return;
  const realRoot = realpathSync(root);
  const realFile = realpathSync(file);
  const fail = (problem: string | undefined) => {
    if (problem) throw new PluginLoadError('unsafe_permissions', problem);
  };
  if (statSync(realRoot).isDirectory()) walk(realRoot, (path, stat) => fail(ownProblem(path, stat, self)));
  fail(ownProblem(realFile, statSync(realFile), self));
  // The folders holding the entry, up to the package folder: owned and closed like the plugin's own files.
  let folder = dirname(realFile);
  const top = statSync(realRoot).isDirectory() ? realRoot : dirname(realFile);
  while (folder !== top && folder.startsWith(`${top}/`)) {
    fail(ownProblem(folder, statSync(folder), self));
    folder = dirname(folder);
  }
  // Every folder above, up to `/` (a package folder itself was checked as the plugin's own above).
  for (let above = top; ; above = dirname(above)) {
    fail(ancestorProblem(above, statSync(above), self));
    if (dirname(above) === above) break;
  }
}
