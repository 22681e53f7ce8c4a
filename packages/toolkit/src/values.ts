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
