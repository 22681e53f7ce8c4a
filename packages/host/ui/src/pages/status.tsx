// Status, live: the MCP listener, stdio, the gateway node, the channel and every imported server,
// each from its own real state. The gateway node section reads only the node's own connection, so
// a working MCP listener is never shown as a gateway connection.
import { Facts, formatTime, Loading, PageHeader, Section, StateBadge } from '../components.js';
import { useLive } from '../live.js';
import type { NodeView, ServerDiagnosticView, StatusView } from '../types.js';

function McpSection(props: { status: StatusView }) {
  const { mcp } = props.status;
  return (
    <Section title="Local MCP server">
      <Facts
        rows={[
          ['State', <StateBadge state={mcp.state} />],
          ['URL', mcp.url ? <code>{mcp.url}</code> : mcp.state === 'disabled' ? 'off in Settings' : 'not listening'],
          ['Startup error', mcp.error ? <span class="error-text">{mcp.error}</span> : undefined],
          ['Requests in flight', mcp.inFlight === undefined ? undefined : String(mcp.inFlight)],
          ['Token file', mcp.tokenPath ? <code>{mcp.tokenPath}</code> : undefined],
        ]}
      />
    </Section>
  );
}

function NodeSection(props: { node: NodeView }) {
  const { node } = props;
  if (!node.enabled) {
    return (
      <Section title="Gateway node">
        <Facts
          rows={[
            ['State', <StateBadge state="off" />],
            ['Gateway connection', 'none — gateway node mode is off (Settings or Gateway page)'],
          ]}
        />
      </Section>
    );
  }
  return (
    <Section title="Gateway node">
      <Facts
        rows={[
          ['State', <StateBadge state={node.state} />],
          ['Gateway', node.url ? <code>{node.url}</code> : 'no gateway URL set'],
          ['Detail', node.detail],
          ['Pairing', node.pairing ? `${node.pairing.state}${node.pairing.requestId ? ` (request ${node.pairing.requestId})` : ''}` : undefined],
          ['Node id', node.nodeId ? <code>{node.nodeId}</code> : undefined],
          ['Connected since', formatTime(node.connectedAt)],
          ['Gateway version', node.serverVersion],
          ['Last error', node.lastError ? <span class="error-text">{`${node.lastError.message} (${node.lastError.code})`}</span> : undefined],
          ['Next retry', formatTime(node.nextRetryAt)],
        ]}
      />
    </Section>
  );
}

function ServerRow(props: { server: ServerDiagnosticView }) {
  const { server } = props;
  return (
    <tr>
      <th scope="row">{server.server}</th>
      <td>{server.transport}</td>
      <td>
        <StateBadge state={server.state} />
      </td>
      <td>{server.toolCount}</td>
      <td>{[server.error, server.listError].filter(Boolean).join(' · ') || '—'}</td>
      <td>{server.pausedUntil ? formatTime(server.pausedUntil) : '—'}</td>
    </tr>
  );
}

function ImportsSection(props: { status: StatusView }) {
  const imports = props.status.mcpClient;
  if (!imports) return null;
  return (
    <Section title="Imported MCP servers" wide>
      <Facts
        rows={[
          ['Re-export', imports.reexport ? 'on' : 'off'],
          ['State', <StateBadge state={imports.state} />],
          ['Imported tools', String(imports.toolCount)],
          ['Error', imports.error],
        ]}
      />
      {imports.servers.length ? (
        <div class="table-scroll">
        <table>
          <caption class="visually-hidden">Imported servers</caption>
          <thead>
            <tr>
              <th scope="col">Server</th>
              <th scope="col">Transport</th>
              <th scope="col">State</th>
              <th scope="col">Tools</th>
              <th scope="col">Error</th>
              <th scope="col">Retry</th>
            </tr>
          </thead>
          <tbody>
            {imports.servers.map((server) => (
              <ServerRow key={server.server} server={server} />
            ))}
          </tbody>
        </table>
        </div>
      ) : (
        <p class="muted">No imported servers are connected{imports.reexport ? '' : ' (re-export is off)'}.</p>
      )}
      {imports.warnings?.length ? (
        <ul class="warnings">
          {imports.warnings.map((warning) => (
            <li key={warning}>{warning}</li>
          ))}
        </ul>
      ) : null}
    </Section>
  );
}

export function StatusPage() {
  const { status, pending } = useLive();
  return (
    <>
      <PageHeader title="Status">Live state of this capnode host{status ? ` (version ${status.version})` : ''}.</PageHeader>
      <p class="visually-hidden" role="status" aria-live="polite">
        {status ? `MCP server ${status.mcp.state}; gateway node ${status.node.enabled ? status.node.state : 'off'}; ${pending.length} pending.` : ''}
      </p>
      <div aria-busy={status ? undefined : true} class="grid">
        {!status ? (
          <Loading what="status" />
        ) : (
          <>
            <McpSection status={status} />
            <Section title="stdio">
              <Facts
                rows={[
                  ['State', <StateBadge state={status.stdio.state} />],
                  ['Approvals endpoint', status.stdio.adminUrl ? <code>{status.stdio.adminUrl}</code> : undefined],
                ]}
              />
            </Section>
            <NodeSection node={status.node} />
            <Section title="Gateway channel">
              <Facts rows={[['Channel tools', status.channel.enabled ? 'on' : 'off']]} />
            </Section>
            <Section title="Approvals">
              <p>
                {pending.length === 0 ? 'Nothing waits for an answer.' : `${pending.length} request${pending.length === 1 ? '' : 's'} waiting.`}{' '}
                <a href="#/approvals">Open approvals</a>
              </p>
              {status.execApprovals ? <Facts rows={[['Exec policy', `${status.execApprovals.mode}, ${status.execApprovals.allowlist} allowlisted`]]} /> : null}
            </Section>
            <ImportsSection status={status} />
          </>
        )}
      </div>
    </>
  );
}
