/** Longest glob accepted, in characters. */
export const MAX_GLOB_CHARS = 1000;
/** Most alternatives one glob's braces expand to. */
export const MAX_GLOB_EXPANSIONS = 64;

/**
 * Compiles a glob into a matcher of `/`-separated relative paths: `*` and `?` within one name,
 * `[abc]`/`[a-z]`/`[!x]` classes, `{a,b}` alternatives, `**` for any number of directories. A glob
 * without `/` matches the name at any depth (`*.ts` matches `src/a.ts`), as in `.gitignore`.
 * Returns `undefined` for a glob it cannot take (too long, too many alternatives).
 *
 * No regular expression is built from the glob and no step backtracks more than once per character,
 * so a hostile glob costs at most (glob length × path length) per directory level. Self-contained (it
 * refers to nothing outside itself): the search worker gets its source text.
 */
export function createGlobMatcher(glob: string, caseInsensitive: boolean): ((path: string) => boolean) | undefined {
  const maxChars = 1000;
  const maxExpansions = 64;
  if (glob.length === 0 || glob.length > maxChars) return undefined;
  const fold = (text: string) => (caseInsensitive ? text.toLowerCase() : text);

  const expand = (pattern: string): string[] | undefined => {
    const open = pattern.indexOf('{');
    if (open < 0) return [pattern];
    let depth = 0;
    let close = -1;
    const commas: number[] = [];
    for (let index = open; index < pattern.length; index++) {
      const char = pattern[index];
      if (char === '\\') index++;
      else if (char === '{') depth++;
      else if (char === '}' && --depth === 0) {
        close = index;
        break;
      } else if (char === ',' && depth === 1) commas.push(index);
    }
    if (close < 0) return [pattern];
    const bounds = [open, ...commas, close];
    const out: string[] = [];
    for (let index = 0; index + 1 < bounds.length; index++) {
      const rest = expand(pattern.slice(0, open) + pattern.slice(bounds[index]! + 1, bounds[index + 1]) + pattern.slice(close + 1));
      if (rest === undefined) return undefined;
      out.push(...rest);
      if (out.length > maxExpansions) return undefined;
    }
    return out;
  };

  const classMatch = (pattern: string, start: number, char: string): { matched: boolean; end: number } | undefined => {
    let index = start + 1;
    const negate = pattern[index] === '!' || pattern[index] === '^';
    if (negate) index++;
    let matched = false;
    let first = true;
    while (index < pattern.length && (pattern[index] !== ']' || first)) {
      first = false;
      let low = pattern[index]!;
      if (low === '\\' && index + 1 < pattern.length) low = pattern[++index]!;
      let high = low;
      if (pattern[index + 1] === '-' && index + 2 < pattern.length && pattern[index + 2] !== ']') {
        high = pattern[index + 2]!;
        index += 2;
      }
      if (char >= low && char <= high) matched = true;
      index++;
    }
    if (index >= pattern.length) return undefined;
    return { matched: matched !== negate, end: index + 1 };
  };

  // One name against one segment: the linear wildcard algorithm (a `*` is retried from the last star only).
  const matchName = (pattern: string, name: string): boolean => {
    let p = 0;
    let n = 0;
    let starP = -1;
    let starN = 0;
    while (n < name.length) {
      const char = pattern[p];
      if (char === '*') {
        while (pattern[p] === '*') p++;
        starP = p;
        starN = n;
        continue;
      }
      if (p < pattern.length) {
        if (char === '?') {
          p++;
          n++;
          continue;
        }
        if (char === '[') {
          const result = classMatch(pattern, p, name[n]!);
          if (result !== undefined) {
            if (result.matched) {
              p = result.end;
              n++;
              continue;
            }
          } else if (name[n] === '[') {
            p++;
            n++;
            continue;
          }
        } else {
          const literal = char === '\\' && p + 1 < pattern.length ? pattern[p + 1] : char;
          if (literal === name[n]) {
            p += char === '\\' ? 2 : 1;
            n++;
            continue;
          }
        }
      }
      if (starP < 0) return false;
      p = starP;
      n = ++starN;
    }
    while (pattern[p] === '*') p++;
    return p === pattern.length;
  };

  const compileOne = (pattern: string): ((parts: string[]) => boolean) => {
    let body = pattern;
    const anchored = body.startsWith('/') || body.replace(/\/+$/, '').includes('/');
    body = body.replace(/^\/+/, '').replace(/\/+$/, '');
    const segments = body.split('/').filter((segment) => segment.length > 0);
    const collapsed: string[] = [];
    for (const segment of segments) if (!(segment === '**' && collapsed[collapsed.length - 1] === '**')) collapsed.push(segment);
    const pats = anchored ? collapsed : ['**', ...collapsed];
    return (parts) => {
      // memo[i * (parts.length + 1) + j]: pattern from i matches path from j (0 unknown, 1 yes, 2 no).
      const width = parts.length + 1;
      const memo = new Uint8Array((pats.length + 1) * width);
      const go = (i: number, j: number): boolean => {
        const key = i * width + j;
        if (memo[key] !== 0) return memo[key] === 1;
        let result: boolean;
        if (i === pats.length) result = j === parts.length;
        else if (pats[i] === '**') result = go(i + 1, j) || (j < parts.length && go(i, j + 1));
        else result = j < parts.length && matchName(pats[i]!, parts[j]!) && go(i + 1, j + 1);
        memo[key] = result ? 1 : 2;
        return result;
      };
      return go(0, 0);
    };
  };

  const alternatives = expand(fold(glob));
  if (alternatives === undefined) return undefined;
  const compiled = alternatives.map(compileOne);
  return (path: string) => {
    const parts = fold(path).split('/').filter((part) => part.length > 0);
    return compiled.some((match) => match(parts));
  };
}
