import { describe, expect, it } from 'vitest';
import ts from 'typescript';
import { parseSource, readSource, repositorySources } from '../support/sourceFiles.js';

/** Heritage calls that make a branded base (`@capnode/toolkit`). */
const BRANDED_BASES = new Set(['defineErrorClass', 'defineBrandedErrorClass']);

interface ErrorClass {
  readonly file: string;
  readonly name: string;
  readonly exported: boolean;
  /** The `extends` expression: a call of a branded base, or an identifier. */
  readonly base: { readonly call: string } | { readonly identifier: string };
}

function isExported(node: ts.ClassDeclaration): boolean {
  return ts.getModifiers(node)?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword) ?? false;
}

/** Every class declaration with an `extends` clause in `source`. */
function classesOf(source: ts.SourceFile): ErrorClass[] {
  const found: ErrorClass[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) && node.name) {
      const heritage = node.heritageClauses?.find((clause) => clause.token === ts.SyntaxKind.ExtendsKeyword)?.types[0]?.expression;
      if (heritage) {
        const base = ts.isCallExpression(heritage) ? { call: heritage.expression.getText(source) } : { identifier: heritage.getText(source) };
        found.push({ file: source.fileName, name: node.name.text, exported: isExported(node), base });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The exported `Error` subclasses without the cross-bundle brand: a class that extends `Error` (or
 * another built-in error, or an error-named class that is not itself branded) instead of a base made
 * by `defineErrorClass` / `defineBrandedErrorClass`, directly or through a branded class.
 */
export function unbrandedErrorClasses(sources: readonly ts.SourceFile[]): string[] {
  const classes = sources.flatMap(classesOf);
  const byName = new Map(classes.map((entry) => [entry.name, entry]));
  const branded = (entry: ErrorClass, seen = new Set<string>()): boolean => {
    if ('call' in entry.base) return BRANDED_BASES.has(entry.base.call);
    const parent = byName.get(entry.base.identifier);
    if (parent === undefined || seen.has(parent.name)) return false;
    seen.add(parent.name);
    return branded(parent, seen);
  };
  const errorLike = (entry: ErrorClass, seen = new Set<string>()): boolean => {
    if ('call' in entry.base) return BRANDED_BASES.has(entry.base.call);
    const { identifier } = entry.base;
    if (/(?:Error|Exception)$/.test(identifier)) return true;
    const parent = byName.get(identifier);
    if (parent === undefined || seen.has(parent.name)) return false;
    seen.add(parent.name);
    return errorLike(parent, seen);
  };
  return classes.filter((entry) => entry.exported && errorLike(entry) && !branded(entry)).map((entry) => `${entry.file}#${entry.name}`);
}

describe('every exported Error subclass carries the cross-bundle brand (made with defineErrorClass / defineBrandedErrorClass)', () => {
  it('holds for every source file in packages/* and apps/*', () => {
    const sources = repositorySources().map((file) => readSource(file));
    expect(sources.length).toBeGreaterThan(100);
    expect(unbrandedErrorClasses(sources)).toEqual([]);
  });

  it('finds a class extending Error or a built-in error, directly or through an unbranded class; accepts branded ones and their subclasses', () => {
    const source = parseSource(
      'demo.ts',
      [
        'export class Plain extends Error {}',
        'export class Typed extends TypeError {}',
        'class Hidden extends Error {}',
        'export class ViaHidden extends Hidden {}',
        "export class Good extends defineErrorClass('Good', ['x']) {}",
        "export class Wire extends defineBrandedErrorClass('Wire') {}",
        'export class GoodChild extends Good {}',
        'export class Emitter extends EventEmitter {}',
        "export class Other extends otherFactory('x') {}",
      ].join('\n'),
    );
    expect(unbrandedErrorClasses([source])).toEqual(['demo.ts#Plain', 'demo.ts#Typed', 'demo.ts#ViaHidden']);
  });
});
