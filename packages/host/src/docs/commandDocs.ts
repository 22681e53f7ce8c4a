import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RegisteredCommand } from '@capnode/capabilities';
import { createHost } from '../host/host.js';

/** The command that regenerates docs/commands.md; the drift test names it. */
export const COMMANDS_DOC_COMMAND = 'pnpm build && node apps/cli/dist/bin.js --list-tools --markdown > docs/commands.md';

type Schema = Readonly<Record<string, unknown>>;

/** Markdown table cell text: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|').trim();
}

/** A JSON Schema's type, short: `string`, `integer (1–300)`, `"png" \| "jpeg"`, `string[]`, `object`. */
export function schemaType(schema: Schema | undefined): string {
  if (!schema) return 'any';
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(' | ');
  if ('const' in schema) return JSON.stringify(schema.const);
  const union = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (Array.isArray(union)) return union.map((entry) => schemaType(entry)).join(' | ');
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : typeof schema.type === 'string' ? schema.type : 'any';
  if (type === 'array') {
    const item = schemaType(schema.items as Schema | undefined);
    return item.includes(' ') ? `(${item})[]` : `${item}[]`;
  }
  const bounds: string[] = [];
  const min = schema.minimum ?? schema.exclusiveMinimum ?? schema.minLength ?? schema.minItems;
  const max = schema.maximum ?? schema.exclusiveMaximum ?? schema.maxLength ?? schema.maxItems;
  if (typeof min === 'number' && typeof max === 'number') bounds.push(`${min}–${max}`);
  else if (typeof max === 'number') bounds.push(`≤ ${max}`);
  else if (typeof min === 'number') bounds.push(`≥ ${min}`);
  return bounds.length ? `${type} (${bounds.join(', ')})` : type;
}

function parameters(command: RegisteredCommand): string[] {
  const schema = command.inputSchema as Schema;
  const properties = (schema.properties ?? {}) as Readonly<Record<string, Schema>>;
  const names = Object.keys(properties);
  if (names.length === 0) return [schema.additionalProperties === false ? 'No parameters.' : 'Parameters: any JSON object (no schema).'];
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const lines = ['| Parameter | Type | Required | Description |', '| --- | --- | --- | --- |'];
  for (const name of names) {
    const property = properties[name]!;
    const description = typeof property.description === 'string' ? property.description : '';
    const fallback = 'default' in property ? `Default ${JSON.stringify(property.default)}.` : '';
    lines.push(`| \`${cell(name)}\` | ${cell(schemaType(property))} | ${required.has(name) ? 'yes' : 'no'} | ${cell([description, fallback].filter(Boolean).join(' '))} |`);
  }
  return lines;
}

/**
 * The command surface as Markdown: each command's name, description, parameters (from its JSON
 * Schema), consent category, approval gate and local-only flag, grouped by category in registry order.
 */
export function formatCommandsMarkdown(commands: readonly RegisteredCommand[]): string {
  const lines = [
    '# capnode command surface',
    '',
    `<!-- Generated from the registry of a stock host; do not edit. Regenerate: ${COMMANDS_DOC_COMMAND} -->`,
    '',
    'Every command is served to local MCP clients (HTTP and stdio) and the CLI; commands not marked local-only are also declared to an OpenClaw gateway.',
    'Commands with a consent category run only when that category is turned on (`capnode consent set <category> ask|allow`); see the README.',
    'A command whose backend is missing on a machine stays listed there and fails with `unavailable` ("unavailable here: install …").',
    '',
  ];
  const categories = [...new Set(commands.map((command) => command.category))];
  for (const category of categories) {
    lines.push(`## ${category}`, '');
    for (const command of commands.filter((candidate) => candidate.category === category)) {
      const { definition } = command;
      lines.push(`### \`${command.name}\``, '', definition.description.trim(), '');
      const facts = [
        definition.consent ? `consent: **${definition.consent}**` : undefined,
        definition.approval === 'exec' || command.name.toLowerCase() === 'system.run' ? 'exec approval: yes' : undefined,
        definition.localOnly ? 'local-only (never declared to a gateway)' : undefined,
        definition.annotations?.readOnly ? 'read-only' : undefined,
        definition.annotations?.destructive ? 'destructive' : undefined,
      ].filter((fact): fact is string => fact !== undefined);
      if (facts.length) lines.push(facts.join(' · '), '');
      lines.push(...parameters(command), '');
    }
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/**
 * Documents the stock host's command surface without a running host: a host in a temporary config
 * directory (default settings, the pack, no user plugins, availability not probed, nothing listening).
 */
export async function stockCommandsMarkdown(): Promise<string> {
  const home = mkdtempSync(join(tmpdir(), 'capnode-docs-'));
  const host = createHost({ home, env: {}, plugins: false, probeAvailability: false, onLog: () => {} });
  try {
    await host.pluginsReady();
    return formatCommandsMarkdown(host.registry.commands());
  } finally {
    await host.close();
    rmSync(home, { recursive: true, force: true });
  }
}
