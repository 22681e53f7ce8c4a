import { truncateText } from './internal/contentLimits.js';

/** Longest server-provided text (a resource, a prompt, a pinned resource) that enters context at once. */
export const MAX_CONTEXT_TEXT = 32_000;

/** Where a piece of server-provided text came from. */
export interface Provenance {
  readonly server: string;
  readonly kind: 'resource' | 'prompt' | 'pinned-resource';
  /** The resource URI or prompt name. */
  readonly id: string;
}

const TAG = 'mcp-untrusted-content';

function attribute(value: string): string {
  return value.replace(/[\u0000-\u001f\u007f"<>&]/g, ' ').slice(0, 200);
}

/**
 * Wraps server-provided text so the model can tell it is data from an external server, not
 * instructions: a labelled envelope with `trust="untrusted-external"`, the text cut to
 * {@link MAX_CONTEXT_TEXT} characters (marked `[capnode: truncated N more characters]`), and any
 * attempt to close the envelope early neutralized. Scrub secrets from `text` before wrapping.
 *
 * @example
 * wrapUntrusted({ server: 'docs', kind: 'resource', id: 'file:///readme.md' }, text);
 * // <mcp-untrusted-content server="docs" kind="resource" id="file:///readme.md" trust="untrusted-external">…</mcp-untrusted-content>
 */
export function wrapUntrusted(provenance: Provenance, text: string, max = MAX_CONTEXT_TEXT): string {
  const bounded = truncateText(text, max);
  const safe = bounded.replace(/<(\/?)\s*mcp-untrusted-content/gi, '<$1 mcp-untrusted-content');
  return `<${TAG} server="${attribute(provenance.server)}" kind="${provenance.kind}" id="${attribute(provenance.id)}" trust="untrusted-external">\n${safe}\n</${TAG}>`;
}
