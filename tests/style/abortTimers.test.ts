import { describe, expect, it } from 'vitest';
import ts from 'typescript';
import { parseSource, readSource, repositorySources } from '../support/sourceFiles.js';

function isFunctionLike(node: ts.Node): node is ts.FunctionLikeDeclaration {
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

/** A callback written inline as a call's argument (`new Promise((resolve) => …)`, `child.once('spawn', () => …)`): part of the function that writes it. */
function isInlineCallback(node: ts.Node): boolean {
  const parent = node.parent;
  return (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) && parent !== undefined && (ts.isCallExpression(parent) || ts.isNewExpression(parent)) && (parent.arguments?.includes(node as ts.Expression) ?? false);
}

function isAbortListener(node: ts.Node): boolean {
  if (ts.isCallExpression(node)) {
    const callee = node.expression;
    const [first] = node.arguments;
    return ts.isPropertyAccessExpression(callee) && callee.name.text === 'addEventListener' && first !== undefined && ts.isStringLiteralLike(first) && first.text === 'abort';
  }
  return ts.isPropertyAccessExpression(node) && node.name.text === 'onabort';
}

function isSetTimeout(node: ts.Node): boolean {
  if (!ts.isCallExpression(node)) return false;
  const callee = node.expression;
  return (ts.isIdentifier(callee) && callee.text === 'setTimeout') || (ts.isPropertyAccessExpression(callee) && callee.name.text === 'setTimeout' && callee.expression.getText() === 'globalThis');
}

/**
 * Functions that pair `setTimeout` with an abort listener (`addEventListener('abort', …)` or
 * `onabort`): a hand-rolled "wait with a timeout and a signal". Inline callbacks count as part of the
 * function that writes them; a named inner function or method is a function of its own.
 */
export function timeoutAbortPairs(source: ts.SourceFile): string[] {
  const marks = new Map<ts.Node, { timer: boolean; abort: boolean }>();
  const visit = (node: ts.Node, owner: ts.Node): void => {
    const current = isFunctionLike(node) && !isInlineCallback(node) ? node : owner;
    if (isSetTimeout(node) || isAbortListener(node)) {
      const mark = marks.get(current) ?? { timer: false, abort: false };
      if (isSetTimeout(node)) mark.timer = true;
      else mark.abort = true;
      marks.set(current, mark);
    }
    ts.forEachChild(node, (child) => visit(child, current));
  };
  visit(source, source);
  return [...marks]
    .filter(([, mark]) => mark.timer && mark.abort)
    .map(([node]) => `${source.fileName}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`);
}

describe('no function pairs setTimeout with an abort listener outside packages/toolkit (use armDeadline / createDeadline / waitFor / delay)', () => {
  it('holds for every source file in packages/* and apps/*', () => {
    const files = repositorySources().filter((file) => !file.startsWith('packages/toolkit/'));
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((file) => timeoutAbortPairs(readSource(file)))).toEqual([]);
  });

  it('finds a timer and an abort listener in one function, inline callbacks included; not in separate functions', () => {
    const source = parseSource(
      'demo.ts',
      [
        'export function wait(ms: number, signal: AbortSignal) {', // 1: paired through inline callbacks
        '  return new Promise((resolve) => {',
        '    const timer = setTimeout(resolve, ms);',
        "    signal.addEventListener('abort', () => clearTimeout(timer), { once: true });",
        '  });',
        '}',
        'export function old(ms: number, signal: AbortSignal) {', // 7: onabort
        '  setTimeout(() => {}, ms);',
        '  signal.onabort = () => {};',
        '}',
        'export function separate(signal: AbortSignal) {', // 11: the timer is in a named inner function
        '  const later = () => setTimeout(() => {}, 5);',
        "  signal.addEventListener('abort', later);",
        '}',
        'export function timerOnly() {',
        '  setTimeout(() => {}, 5);',
        '}',
      ].join('\n'),
    );
    expect(timeoutAbortPairs(source)).toEqual(['demo.ts:1', 'demo.ts:7']);
  });
});
