import type { InputJsonSchema } from '@capnode/capabilities';
import type { CatalogEntry } from './catalog.js';

// Tool search for deferred loading: keyword scoring over names and descriptions, or exact
// `select:<name>,…`.

/** The built-in search tool's name. */
export const SEARCH_TOOL = 'tool_search';
/** Hits returned when the caller gives no `max_results`. */
export const SEARCH_RESULTS = 10;

export const SEARCH_DESCRIPTION = 'Finds imported MCP tools and returns their full schemas; found tools become callable. Query with keywords, or "select:<name>,<name>" for exact names.';
export const SEARCH_INPUT: InputJsonSchema = { type: 'object', properties: { query: { type: 'string' }, max_results: { type: 'number' } }, required: ['query'] };

/** The best `limit` entries for `query`; `get` resolves exact names for `select:`. */
export function searchCatalog(entries: readonly CatalogEntry[], get: (name: string) => CatalogEntry | undefined, query: string, limit: number): CatalogEntry[] {
  if (query.toLowerCase().startsWith('select:')) {
    const wanted = query.slice('select:'.length).split(',').map((name) => name.trim().toLowerCase());
    return wanted.flatMap((name) => get(name) ?? []).slice(0, limit);
  }
  const terms = query.toLowerCase().split(/[\s,]+/).filter(Boolean);
  if (terms.length === 0) return [];
  return entries
    .map((entry) => {
      const haystack = `${entry.exposed} ${entry.description}`.toLowerCase();
      return { entry, score: terms.filter((term) => haystack.includes(term)).length + (terms.some((t) => entry.exposed.toLowerCase().includes(t)) ? 0.5 : 0) };
    })
    .filter((hit) => hit.score >= 1)
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((hit) => hit.entry);
}
