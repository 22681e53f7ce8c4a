function distance(a: string, b: string): number {
  const previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = previous[0]!;
    previous[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = previous[j]!;
      previous[j] = Math.min(above + 1, previous[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return previous[b.length]!;
}

/**
 * Names from `candidates` close to `input` (case-insensitive): same prefix segment or a small edit
 * distance, best first, at most `limit`.
 */
export function closeNames(input: string, candidates: readonly string[], limit = 3): string[] {
  const needle = input.toLowerCase();
  const budget = Math.max(2, Math.floor(needle.length / 3));
  return candidates
    .map((name) => {
      const lower = name.toLowerCase();
      let score = distance(needle, lower);
      if (lower.includes(needle) || needle.includes(lower)) score = Math.min(score, 1);
      return { name, score };
    })
    .filter((entry) => entry.score <= budget)
    .sort((a, b) => a.score - b.score || a.name.localeCompare(b.name))
    .slice(0, limit)
    .map((entry) => entry.name);
}
