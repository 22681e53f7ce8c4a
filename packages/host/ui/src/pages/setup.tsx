// First run: the MCP server is on, the token exists, and "Connect a client" is the next step.
import { api } from '../api.js';
import { ErrorNote, PageHeader, Section, StateBadge, useLoad } from '../components.js';
import { useLive } from '../live.js';
import type { TokenView } from '../types.js';

export function SetupPage() {
  const { status } = useLive();
  const token = useLoad(() => api<TokenView>('GET', '/api/token'));
  const listening = status?.mcp.state === 'listening';
  return (
    <>
      <PageHeader title="Setup">Welcome to capnode. Three steps, two of them already done.</PageHeader>
      <ol class="steps">
        <li>
          <Section title="1. The local MCP server is on">
            <p>
              <StateBadge state={status?.mcp.state} /> {listening && status?.mcp.url ? <code>{status.mcp.url}</code> : status?.mcp.error ?? 'Starting…'}
            </p>
          </Section>
        </li>
        <li>
          <Section title="2. A token was created">
            <p>{token.value ? <>Stored in <code>{token.value.path}</code>; clients use it to reach this host. See the <a href="#/token">Token</a> page.</> : 'Loading the token…'}</p>
            <ErrorNote error={token.error} />
          </Section>
        </li>
        <li>
          <Section title="3. Connect a client">
            <p>Add capnode to Claude Desktop, Claude Code, Cursor or VS Code.</p>
            <p>
              <a class="button primary" href="#/connect">
                Connect a client
              </a>
            </p>
          </Section>
        </li>
      </ol>
    </>
  );
}
