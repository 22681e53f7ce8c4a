import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, formatSurface, publicEntries, readSurfaces, snapshotPath, type ExportedName, type PublicEntry } from '../support/apiSurface.js';

/**
 * The `.d.ts` surface of every public entry (each `exports` subpath of each workspace package, not
 * `./internal/*`) is pinned by a committed snapshot, `<package>/api/<entry>.api.txt`: every exported
 * name with its declared type signature. A change to the public API shows up as a diff of that file
 * in review. Regenerate every snapshot with `pnpm surface:update`.
 */
const UPDATE = process.env.UPDATE_SURFACE === '1';
const UPDATE_HINT = 'run `pnpm surface:update` (or `UPDATE_SURFACE=1 npx vitest run tests/surface`) and commit the snapshot if the change is intended';

const entries = publicEntries();
let surfaces: Map<PublicEntry, ExportedName[]>;

beforeAll(() => {
  surfaces = readSurfaces(entries);
}, 120_000);

describe('public surface snapshots', () => {
  it.each(entries.map((entry) => [`${entry.packageName}${entry.subpath === '.' ? '' : entry.subpath.slice(1)}`, entry] as const))('%s matches its api snapshot', (_label, entry) => {
    const actual = formatSurface(entry, surfaces.get(entry)!);
    const file = snapshotPath(entry);
    if (UPDATE) {
      mkdirSync(dirname(file), { recursive: true });
      if (!existsSync(file) || readFileSync(file, 'utf8') !== actual) writeFileSync(file, actual);
      return;
    }
    const expected = existsSync(file) ? readFileSync(file, 'utf8') : '';
    expect(actual, `${relative(REPO_ROOT, file)} does not match the exports of ${entry.packageName}${entry.subpath.slice(1)}: ${UPDATE_HINT}`).toEqual(expected);
  });

  it('no snapshot is left for an entry that is gone', () => {
    const wanted = new Set(entries.map((entry) => snapshotPath(entry)));
    const stale: string[] = [];
    for (const group of ['packages', 'apps']) {
      for (const dir of readdirSync(join(REPO_ROOT, group))) {
        const apiDir = join(REPO_ROOT, group, dir, 'api');
        if (!existsSync(apiDir)) continue;
        for (const name of readdirSync(apiDir)) if (name.endsWith('.api.txt') && !wanted.has(join(apiDir, name))) stale.push(join(apiDir, name));
      }
    }
    if (UPDATE) for (const file of stale) rmSync(file);
    else expect(stale.map((file) => relative(REPO_ROOT, file)), UPDATE_HINT).toEqual([]);
  });
});

describe('nothing is exported twice', () => {
  it('no name is exported by two entries of the same package', () => {
    const owners = new Map<string, string[]>();
    for (const entry of entries) {
      for (const { name } of surfaces.get(entry)!) {
        const key = `${entry.packageName} ${name}`;
        owners.set(key, [...(owners.get(key) ?? []), entry.subpath]);
      }
    }
    const repeated = [...owners].filter(([, subpaths]) => subpaths.length > 1).map(([key, subpaths]) => `${key}: ${subpaths.join(', ')}`);
    expect(repeated, 'each name belongs to exactly one entry: the one its audience imports (Node-only under /node, runtime-neutral in the root)').toEqual([]);
  });
});
