/** An MCP tool as `tools/list` returns it (the fields the CLI shows). */
export interface ToolInfo {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema?: Record<string, unknown>;
}

/** A `tools/call` result (the fields the CLI shows). */
export interface CallResult {
  readonly content?: readonly Record<string, unknown>[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  readonly _meta?: Record<string, unknown>;
}

/**
 * The `_meta` key under which the capnode host puts an error result's failure code (`FAILURE_META_KEY`
 * of `@capnode/mcp-server`, spelled out here so the CLI's fast path does not load the server package).
 */
const FAILURE_META_KEY = 'capnode/failure';

/**
 * The machine-readable failure code of an `isError` result (`unknown_command`, `denied`, `timeout`, …),
 * or `undefined` for a success or a result without one. The CLI branches on this, never on the text.
 */
export function failureCode(result: CallResult): string | undefined {
  if (result.isError !== true) return undefined;
  const failure = result._meta?.[FAILURE_META_KEY] as { code?: unknown } | undefined;
  return typeof failure?.code === 'string' ? failure.code : undefined;
}

function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0]!.trim();
}

/** Two aligned columns, tool name and the first line of its description, each line prefixed by `indent`. */
export function formatToolRows(tools: readonly ToolInfo[], indent = ''): string[] {
  const width = Math.min(40, Math.max(4, ...tools.map((tool) => tool.name.length)));
  return tools.map((tool) => `${indent}${tool.name.padEnd(width)}  ${firstLine(tool.description)}`.trimEnd());
}

/** The tool table with a count and how to call one (`call` is the command shown). */
export function formatToolTable(tools: readonly ToolInfo[], call = 'capnode --command <name>'): string {
  const lines = formatToolRows(tools);
  lines.push('', `${tools.length} tool${tools.length === 1 ? '' : 's'}; call one with: ${call} --params '<json>'`);
  return lines.join('\n');
}

function byteSize(base64: unknown): string {
  const bytes = typeof base64 === 'string' ? Math.floor((base64.length * 3) / 4) : 0;
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KiB`;
}

/** Human text for tool result content: text as is, binary content as a one-line summary. */
export function formatContent(content: readonly Record<string, unknown>[]): string {
  return content
    .map((item) => {
      switch (item.type) {
        case 'text':
          return String(item.text ?? '');
        case 'image':
        case 'audio':
          return `[${item.type} ${String(item.mimeType ?? '')}, ${byteSize(item.data)}] (use --json for the data)`;
        case 'resource': {
          const resource = (item.resource ?? {}) as Record<string, unknown>;
          if (typeof resource.text === 'string') return resource.text;
          return `[resource ${String(resource.uri ?? '')} ${String(resource.mimeType ?? '')}, ${byteSize(resource.blob)}] (use --json for the data)`;
        }
        case 'resource_link':
          return `[link ${String(item.uri ?? '')}]`;
        default:
          return JSON.stringify(item);
      }
    })
    .join('\n');
}
