import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The repository root. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

function isTestFile(path: string): boolean {
  return /\.(test|spec)\.tsx?$/.test(path) || path.split(sep).includes('__tests__');
}

function listSources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      if (entry !== 'node_modules' && entry !== 'dist') out.push(...listSources(path));
    } else if (/\.(ts|tsx|mts|cts)$/.test(entry) && !entry.endsWith('.d.ts') && !isTestFile(path)) {
      out.push(path);
    }
  }
  return out;
}

/** Every non-test TypeScript source of packages/* and apps/* (`src/`, and a package's `ui/src/`), as repository-relative paths. */
export function repositorySources(root = repoRoot): string[] {
  const files: string[] = [];
  for (const group of ['packages', 'apps']) {
    const groupDir = join(root, group);
    if (!existsSync(groupDir)) continue;
    for (const pkg of readdirSync(groupDir)) {
      for (const src of [join(groupDir, pkg, 'src'), join(groupDir, pkg, 'ui', 'src')]) {
        if (existsSync(src) && statSync(src).isDirectory()) files.push(...listSources(src));
      }
    }
  }
  return files.map((file) => relative(root, file).split(sep).join('/')).sort();
}

/** Parses `text` (the file `name`) into a TypeScript syntax tree with parent links. */
export function parseSource(name: string, text: string): ts.SourceFile {
  return ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true, name.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
}

/** Reads and parses a repository-relative source file. */
export function readSource(file: string, root = repoRoot): ts.SourceFile {
  return parseSource(file, readFileSync(join(root, file), 'utf8'));
}
