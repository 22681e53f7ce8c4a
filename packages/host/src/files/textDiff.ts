/**
 * A unified diff of two texts with `context` lines around the change: the common head and tail are
 * cut off and the rest is one hunk of removed then added lines. Config merges change one region
 * (an entry added or replaced), so this stays linear on files of any size and reads like `diff -u`.
 * Empty when the texts are equal.
 */
export function unifiedDiff(before: string, after: string, labels: { from: string; to: string }, context = 3): string {
  if (before === after) return '';
  const a = splitLines(before);
  const b = splitLines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const start = Math.max(0, head - context);
  const endA = Math.min(a.length, a.length - tail + context);
  const endB = Math.min(b.length, b.length - tail + context);
  const lines = [`--- ${labels.from}`, `+++ ${labels.to}`, `@@ -${range(start, endA - start)} +${range(start, endB - start)} @@`];
  for (let i = start; i < head; i++) lines.push(` ${a[i]}`);
  for (let i = head; i < a.length - tail; i++) lines.push(`-${a[i]}`);
  for (let i = head; i < b.length - tail; i++) lines.push(`+${b[i]}`);
  for (let i = a.length - tail; i < endA; i++) lines.push(` ${a[i]}`);
  return `${lines.join('\n')}\n`;
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function range(start: number, count: number): string {
  return count === 0 ? `${start},0` : `${start + 1},${count}`;
}
