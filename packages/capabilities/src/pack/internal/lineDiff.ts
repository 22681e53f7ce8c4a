/** One line of a diff: kept (` `), removed (`-`) or added (`+`). */
export interface DiffOp {
  readonly kind: ' ' | '-' | '+';
  readonly line: string;
}

/** Most edits the exact (Myers) diff looks for; past it the changed middle is shown as removed then added. */
const MAX_EDIT_DISTANCE = 500;

/** Myers' O(ND) shortest edit script of `a` to `b`, or undefined when it needs more than `maxD` edits. */
function myers(a: readonly string[], b: readonly string[], maxD: number): DiffOp[] | undefined {
  const n = a.length;
  const m = b.length;
  const offset = maxD + 1;
  let v = new Int32Array(2 * offset + 1);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= maxD; d++) {
    trace.push(v.slice());
    const next = v.slice();
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      next[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, d, offset);
    }
    v = next;
  }
  return undefined;
}

function backtrack(a: readonly string[], b: readonly string[], trace: readonly Int32Array[], depth: number, offset: number): DiffOp[] {
  const ops: DiffOp[] = [];
  let x = a.length;
  let y = b.length;
  const keep = () => {
    x--;
    y--;
    ops.push({ kind: ' ', line: a[x]! });
  };
  for (let d = depth; d > 0; d--) {
    // trace[d] is the furthest-reaching state before step d.
    const v = trace[d]!;
    const k = x - y;
    const down = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!);
    const prevK = down ? k + 1 : k - 1;
    const prevX = v[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) keep();
    if (down) ops.push({ kind: '+', line: b[--y]! });
    else ops.push({ kind: '-', line: a[--x]! });
  }
  while (x > 0 && y > 0) keep();
  return ops.reverse();
}

/**
 * The line edits from `before` to `after`: common lines at both ends kept, the middle diffed exactly
 * (Myers) when that takes at most {@link MAX_EDIT_DISTANCE} edits, else shown as removed then added.
 */
export function diffLines(before: readonly string[], after: readonly string[]): DiffOp[] {
  let start = 0;
  while (start < before.length && start < after.length && before[start] === after[start]) start++;
  let endA = before.length;
  let endB = after.length;
  while (endA > start && endB > start && before[endA - 1] === after[endB - 1]) {
    endA--;
    endB--;
  }
  const a = before.slice(start, endA);
  const b = after.slice(start, endB);
  const middle = myers(a, b, Math.min(MAX_EDIT_DISTANCE, a.length + b.length)) ?? [...a.map((line) => ({ kind: '-' as const, line })), ...b.map((line) => ({ kind: '+' as const, line }))];
  return [...before.slice(0, start).map((line) => ({ kind: ' ' as const, line })), ...middle, ...before.slice(endA).map((line) => ({ kind: ' ' as const, line }))];
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * A unified diff (`--- a/<path>`, `+++ b/<path>`, `@@ -l,s +l,s @@` hunks with `context` lines around
 * each change) of `before` to `after`; empty when they are equal. Own code, no dependency: the pack
 * entry loads only zod and Node built-ins.
 */
export function unifiedDiff(before: string, after: string, options: { readonly path: string; readonly context?: number }): string {
  if (before === after) return '';
  const context = options.context ?? 3;
  const ops = diffLines(splitLines(before), splitLines(after));
  const out = [`--- a/${options.path}`, `+++ b/${options.path}`];
  let index = 0;
  while (index < ops.length) {
    while (index < ops.length && ops[index]!.kind === ' ') index++;
    if (index >= ops.length) break;
    const from = Math.max(0, index - context);
    let to = index;
    // Extend the hunk while the next change is within 2 × context kept lines.
    for (let scan = index; scan < ops.length; scan++) {
      if (ops[scan]!.kind !== ' ') to = scan;
      else if (scan - to > 2 * context) break;
    }
    const end = Math.min(ops.length, to + context + 1);
    let oldLine = 1;
    let newLine = 1;
    for (let at = 0; at < from; at++) {
      if (ops[at]!.kind !== '+') oldLine++;
      if (ops[at]!.kind !== '-') newLine++;
    }
    const hunk = ops.slice(from, end);
    const oldCount = hunk.filter((op) => op.kind !== '+').length;
    const newCount = hunk.filter((op) => op.kind !== '-').length;
    out.push(`@@ -${oldCount === 0 ? oldLine - 1 : oldLine},${oldCount} +${newCount === 0 ? newLine - 1 : newLine},${newCount} @@`);
    for (const op of hunk) out.push(`${op.kind}${op.line}`);
    index = end;
  }
  if (!before.endsWith('\n') && before !== '') out.push('\\ No newline at end of old file');
  if (!after.endsWith('\n') && after !== '') out.push('\\ No newline at end of new file');
  return `${out.join('\n')}\n`;
}
