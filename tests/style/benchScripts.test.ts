import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const bench = resolve(dirname(fileURLToPath(import.meta.url)), '../../bench');

/** Every bench script, so a merge that cuts one in half fails here rather than at `pnpm bench`. */
function scripts(): string[] {
  return ['', 'lib', 'servers'].flatMap((folder) =>
    readdirSync(join(bench, folder))
      .filter((name) => name.endsWith('.mjs'))
      .map((name) => join(bench, folder, name)),
  );
}

describe('bench scripts', () => {
  it('every bench script parses', () => {
    const files = scripts();
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      expect(() => execFileSync(process.execPath, ['--check', file], { stdio: 'pipe' }), file).not.toThrow();
    }
  });
});
