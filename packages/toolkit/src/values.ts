/**
 * True for a non-null object that is not an array: the shape a JSON object parses to, and what
 * arguments, settings patches and config sections must be. The prototype is not checked (a class
 * instance passes), so the check costs three comparisons on hot paths.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Severity of a log line, lowest first: the levels of MCP logging (RFC 5424 names) capnode uses.
 * `debug` lines are shown only on request (`CAPNODE_DEBUG`); `notice` is a normal but significant
 * event (a capability may send it; sinks that do not distinguish it print it as is).
 */
export type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error';

/**
 * True when JSON `text` nests arrays and objects deeper than `maxDepth`: a linear scan before
 * `JSON.parse`, so a body of `[[[[…` is refused before any recursive walk over it can overflow the stack.
 * Brackets inside strings do not count.
 */
export function exceedsJsonDepth(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      if (++depth > maxDepth) return true;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return false;
}
