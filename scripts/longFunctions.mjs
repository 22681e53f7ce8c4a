#!/usr/bin/env node
/**
 * Lists functions and closures longer than the style limit (BRIEF: "no function/closure over ~150
 * lines") in packages/*\/src and apps/*\/src, tests excluded, using the TypeScript compiler API.
 *
 * Usage: node scripts/longFunctions.mjs [--max 150] [--json] [--root <repo>]
 * Exit status 1 when an offender is not on the allowlist (`scripts/longFunctions.allow.json`:
 * `{ "<file>#<name>": "<why it is not split yet>" }`), or when an allowlist entry is no longer an
 * offender (remove it); 2 on bad arguments.
 */
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Whether `file` is test code (unit tests beside code, test helpers). */
function isTestFile(file) {
  return /\.(test|spec)\.tsx?$/.test(file) || file.split(sep).includes('__tests__');
}

function listSources(dir) {
  const out = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      if (entry === 'node_modules' || entry === 'dist') continue;
      out.push(...listSources(path));
    } else if (/\.(ts|tsx|mts|cts)$/.test(entry) && !entry.endsWith('.d.ts') && !isTestFile(path)) {
      out.push(path);
    }
  }
  return out;
}

/** The source directories scanned: packages/*\/src and apps/*\/src. */
export function sourceFiles(base = root) {
  const files = [];
  for (const group of ['packages', 'apps']) {
    const groupDir = join(base, group);
    if (!existsSync(groupDir)) continue;
    for (const pkg of readdirSync(groupDir)) {
      const src = join(groupDir, pkg, 'src');
      if (existsSync(src) && statSync(src).isDirectory()) files.push(...listSources(src));
    }
  }
  return files.sort();
}

/** A readable name for a function node: its declared name, or what it is assigned to. */
function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name && (ts.isStringLiteral(node.name) || ts.isComputedPropertyName(node.name))) return node.name.getText();
  const parent = node.parent;
  if (parent) {
    if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
    if (ts.isPropertyAssignment(parent)) return parent.name.getText();
    if (ts.isBinaryExpression(parent) && parent.right === node) return parent.left.getText();
    if (ts.isCallExpression(parent)) {
      const callee = parent.expression.getText();
      return `<callback of ${callee.length > 40 ? `${callee.slice(0, 40)}…` : callee}>`;
    }
  }
  return '<anonymous>';
}

function isFunctionLike(node) {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** Every function/closure in `file` whose body spans more than `max` lines. */
export function longFunctionsInFile(file, max, base = root) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found = [];
  const visit = (node) => {
    if (isFunctionLike(node) && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      const lines = end - start + 1;
      if (lines > max) found.push({ file: relative(base, file).split(sep).join('/'), name: nameOf(node), line: start, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every offender in the repository, longest first. */
export function findLongFunctions({ max = 150, base = root } = {}) {
  return sourceFiles(base)
    .flatMap((file) => longFunctionsInFile(file, max, base))
    .sort((a, b) => b.lines - a.lines);
}

/** The allowlist: `{ "<file>#<name>": "<reason>" }`, each an offender not split yet. */
export function readAllowlist(base = root) {
  const path = join(base, 'scripts', 'longFunctions.allow.json');
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {};
}

export const offenderKey = (offender) => `${offender.file}#${offender.name}`;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const valueOf = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  const max = Number(valueOf('--max') ?? 150);
  if (!Number.isInteger(max) || max < 1) {
    process.stderr.write('longFunctions: --max takes a positive whole number of lines\n');
    process.exit(2);
  }
  const base = valueOf('--root') ?? root;
  if (!existsSync(base)) {
    process.stderr.write(`longFunctions: --root ${base} does not exist\n`);
    process.exit(2);
  }
  const offenders = findLongFunctions({ max, base });
  const allow = readAllowlist(base);
  const found = new Set(offenders.map(offenderKey));
  const stale = Object.keys(allow).filter((key) => !found.has(key));
  if (args.includes('--json')) {
    process.stdout.write(`${JSON.stringify({ offenders: offenders.map((o) => ({ ...o, allowed: allow[offenderKey(o)] ?? null })), stale }, null, 2)}\n`);
  } else {
    for (const o of offenders) {
      const reason = allow[offenderKey(o)];
      process.stdout.write(`${String(o.lines).padStart(4)} lines  ${o.file}:${o.line}  ${o.name}${reason ? `  (allowed: ${reason})` : ''}\n`);
    }
    for (const key of stale) process.stdout.write(`stale allowlist entry (no longer over ${max} lines; remove it): ${key}\n`);
    if (offenders.length === 0) process.stdout.write(`no function or closure over ${max} lines\n`);
  }
  process.exitCode = offenders.some((o) => !allow[offenderKey(o)]) || stale.length > 0 ? 1 : 0;
}
