import type { RegisteredCommand } from '@capnode/capabilities';
import type { Settings } from '../config/settings.js';

/** The command that regenerates docs/SKILL.md; the drift test names it. */
export const SKILL_DOC_COMMAND = 'pnpm build && CAPNODE_HOME=$(mktemp -d) node apps/cli/dist/bin.js skill > docs/SKILL.md';

/** The skill's name: its frontmatter `name` and the directory a gateway node publishes it under. */
export const SKILL_NAME = 'capnode';

/** The skill's frontmatter `description` (plain text, no YAML specials), also what the gateway node publishes. */
export const SKILL_DESCRIPTION =
  'Use this machine through capnode. Lists what each capnode command does, which consent category and approval it needs, and how to retry a call that returned approval_pending.';

/** Longest command description line the skill keeps (the first sentence, cut). */
const MAX_LINE = 240;

function firstSentence(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  const end = line.search(/[.!?](\s|$)/);
  const sentence = end === -1 ? line : line.slice(0, end + 1);
  return sentence.length > MAX_LINE ? `${sentence.slice(0, MAX_LINE - 1)}…` : sentence;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

function publishedServers(settings: Settings): string {
  const servers: unknown = (settings.mcpClient as { servers?: unknown } | undefined)?.servers;
  const names = Array.isArray(servers) ? servers.map((server: { name?: unknown }) => String(server?.name ?? '')).filter(Boolean) : [];
  const publish = settings.gateway.publishServers;
  if (publish === undefined || (Array.isArray(publish) && publish.length === 0)) return 'none (`gateway.publishServers` is not set)';
  if (publish === 'all') return names.length ? `all (${names.map((name) => `\`${name}\``).join(', ')})` : 'all (none configured)';
  return publish.map((name: string) => `\`${name}\``).join(', ');
}

function commandLines(commands: readonly RegisteredCommand[]): string[] {
  const lines: string[] = [];
  for (const category of [...new Set(commands.map((command) => command.category))]) {
    lines.push(`### ${category}`, '', '| Command | What it does | Consent | Approval | Gateway |', '| --- | --- | --- | --- | --- |');
    for (const command of commands.filter((candidate) => candidate.category === category)) {
      const { definition } = command;
      const approval = definition.approval === 'exec' || command.name.toLowerCase() === 'system.run' ? 'exec' : '';
      lines.push(`| \`${command.name}\` | ${cell(firstSentence(definition.description))} | ${definition.consent ?? ''} | ${approval} | ${definition.localOnly ? 'local only' : 'yes'} |`);
    }
    lines.push('');
  }
  return lines;
}

/**
 * The capnode skill (a SKILL.md) for agents: how to call this machine's commands from a local MCP
 * client and from an OpenClaw gateway, what consent and approvals mean for a call and how to retry
 * `approval_pending`, then every command of `commands` with its consent category and approval gate,
 * with the settings that decide them (consent, exec approvals, approval wait, published servers).
 * Imported MCP tools (category `mcp`) are left out of the table: they change while the host runs.
 */
export function formatSkillMarkdown(commands: readonly RegisteredCommand[], settings: Settings): string {
  const own = commands.filter((command) => command.category !== 'mcp');
  const consent = Object.entries(settings.consent)
    .filter(([, value]) => typeof value === 'string')
    .map(([category, value]) => `\`${category}\` ${String(value)}`)
    .join(', ');
  const lines = [
    '---',
    `name: ${SKILL_NAME}`,
    `description: ${SKILL_DESCRIPTION}`,
    '---',
    '',
    '# capnode',
    '',
    `<!-- Generated from the registry and settings; do not edit. Regenerate: ${SKILL_DOC_COMMAND} -->`,
    '',
    'capnode gives agents this machine: device facts, screen, camera, location, files, programs, a browser, and the tools of MCP servers its user imported. Every call, from any transport, passes the same checks: consent, approvals, and an audit log.',
    '',
    '## How to call',
    '',
    '- From a local MCP client (HTTP or stdio): call the command by its name as an MCP tool, e.g. `device.info`.',
    '- From an OpenClaw gateway agent: use the `nodes` tool with `action: "invoke"`, `node: <this node>`, `invokeCommand: <command>` and `invokeParamsJson: "{…}"`; `system.run` goes through `exec` with `host: "node"`. Commands marked *local only* are never offered to a gateway.',
    `- Imported MCP tools published to the gateway appear there as tools of their own, named \`<server>__<tool>\`; call them like any tool. Published servers: ${publishedServers(settings)}.`,
    '',
    '## Consent',
    '',
    `A command with a consent category runs only when the person turned that category on: \`off\` refuses (failure code \`consent_required\`), \`ask\` asks them first, \`allow\` runs. Now: ${consent}. Do not retry a \`consent_required\` call; tell the person which category it needs (\`capnode consent set <category> ask\`).`,
    '',
    '## Approvals',
    '',
    `Commands with an *exec* approval (programs on this machine) follow the exec policy (now \`${settings.execApprovals.mode}\`): unless the program is allowed already, the person is asked. Imported MCP tools are asked for unless their risk profile approves them automatically. How a call waits for the answer: \`approvals.wait\` is \`${settings.approvals.wait}\`.`,
    '',
    '- The call may wait until the person answers; keep waiting, do not send the call again meanwhile.',
    '- It may return at once with failure code `approval_pending` and an approval id. Tell the person (dashboard Approvals page, or `capnode approvals allow <id>`), then retry the identical call: same command, same arguments, same client. While it is pending the retry returns `approval_pending` again and asks no second time; once allowed it runs exactly once; after a denial it fails `denied`.',
    '- `denied`: the person said no; do not retry. `approval_timeout`: nobody answered in time; ask before trying again. `busy`: too many approvals wait; retry later.',
    '',
    '## Commands',
    '',
    ...commandLines(own),
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}
