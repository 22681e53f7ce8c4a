// MCP servers: the servers whose tools this host imports, with their state; test, enable/disable,
// remove, per-tool switches; adding a server and importing the ones other clients' configs name.
import { useEffect, useState } from 'preact/hooks';
import { api, describeError } from '../api.js';
import { ConfirmButton, ErrorNote, Loading, PageHeader, Section, StateBadge, useAction, useLoad } from '../components.js';
import { refreshLive, useLive } from '../live.js';
import type { ServerDiagnosticView, ServerItem, ServersView, ServerTestResult, ToolPolicy, ToolView } from '../types.js';
import { AddServerForm } from './serverForm.js';
import { DiscoveredServers } from './serverImport.js';

const APPROVALS: readonly [string, string][] = [
  ['default', 'Default (risk profile decides)'],
  ['auto', 'Auto-approve'],
  ['ask', 'Always ask'],
];

function ToolRow(props: { server: string; tool: ToolView; onChange: () => void }) {
  const { tool, server } = props;
  const action = useAction();
  // Shown at once; put back when the host refuses, replaced by the stored value once reloaded.
  const [enabled, setEnabled] = useState(tool.enabled !== false);
  const [approval, setApproval] = useState(tool.approval ?? 'default');
  useEffect(() => setEnabled(tool.enabled !== false), [tool.enabled]);
  useEffect(() => setApproval(tool.approval ?? 'default'), [tool.approval]);
  const patch = (change: { enabled?: boolean; approval?: string }) => {
    if (change.enabled !== undefined) setEnabled(change.enabled);
    if (change.approval !== undefined) setApproval(change.approval);
    void action
      .run(async () => {
        await api('PATCH', `/api/servers/${encodeURIComponent(server)}`, { tools: { [tool.name]: change } });
        props.onChange();
      })
      .then((ok) => {
        if (ok) return;
        setEnabled(tool.enabled !== false);
        setApproval(tool.approval ?? 'default');
      });
  };
  const enabledId = `tool-${server}-${tool.name}-enabled`;
  const approvalId = `tool-${server}-${tool.name}-approval`;
  return (
    <tr>
      <th scope="row">
        <code>{tool.name}</code>
        {tool.description ? <span class="muted"> — {tool.description}</span> : null}
      </th>
      <td>
        <input type="checkbox" id={enabledId} checked={enabled} disabled={action.busy} onChange={(event) => patch({ enabled: (event.currentTarget as HTMLInputElement).checked })} />
        <label for={enabledId} class="visually-hidden">
          Enable {tool.name}
        </label>
      </td>
      <td>
        <label for={approvalId} class="visually-hidden">
          Approval for {tool.name}
        </label>
        <select id={approvalId} value={approval} disabled={action.busy} onChange={(event) => patch({ approval: (event.currentTarget as HTMLSelectElement).value })}>
          {APPROVALS.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
        {action.error ? (
          <span class="field-error" role="alert">
            {describeError(action.error)}
          </span>
        ) : null}
      </td>
    </tr>
  );
}

/**
 * The server's tools with their choices: those its last test listed, plus every tool of it the
 * policy names (`<server>__<tool>`), each enabled unless excluded, and auto-approved or always asked.
 */
function toolsOf(server: string, tested: readonly { name: string; description?: string }[] | undefined, policy: ToolPolicy | undefined): ToolView[] {
  const prefix = `${server.toLowerCase()}__`;
  const named = [...(policy?.excludedTools ?? []), ...(policy?.autoApprove ?? []), ...(policy?.alwaysAsk ?? [])].filter((tool) => tool.toLowerCase().startsWith(prefix));
  const byName = new Map<string, { name: string; description?: string }>();
  for (const tool of tested ?? []) byName.set(tool.name, tool);
  for (const tool of named) if (!byName.has(tool)) byName.set(tool, { name: tool });
  return [...byName.values()].map((tool) => ({
    ...tool,
    enabled: !(policy?.excludedTools ?? []).includes(tool.name),
    approval: (policy?.autoApprove ?? []).includes(tool.name) ? 'auto' : (policy?.alwaysAsk ?? []).includes(tool.name) ? 'ask' : 'default',
  }));
}

function ServerCard(props: { item: ServerItem; live: ServerDiagnosticView | undefined; policy: ToolPolicy | undefined; onChange: () => void }) {
  const { item } = props;
  const { config } = item;
  const action = useAction();
  const [test, setTest] = useState<string>('');
  const [showTools, setShowTools] = useState(false);
  const enabled = item.enabled ?? config.enabled !== false;
  const diagnostic = props.live ?? item.status;
  const transport = config.transport ?? (config.command ? 'stdio' : 'http');
  const state = diagnostic?.state ?? (enabled ? 'configured' : 'disabled');
  const error = diagnostic?.error ?? diagnostic?.listError;
  const name = item.name;
  const id = `server-${name}`;
  const [tested, setTested] = useState<readonly { name: string; description?: string }[] | undefined>(undefined);
  const tools = toolsOf(name, tested, props.policy);
  const toolCount = diagnostic?.toolCount ?? tested?.length;
  const runTest = () =>
    action.run(async () => {
      setTest('Testing…');
      const answer = await api<ServerTestResult>('POST', `/api/servers/${encodeURIComponent(name)}/test`);
      const count = answer.tools?.length;
      const ms = answer.diagnostic?.connectMs;
      if (answer.tools) setTested(answer.tools);
      setTest(
        answer.ok
          ? `Test passed: connected${count === undefined ? '' : `, ${count} tool${count === 1 ? '' : 's'}`}${ms === undefined ? '' : ` in ${Math.round(ms)} ms`}.`
          : `Test failed: ${answer.diagnostic?.error ?? answer.diagnostic?.listError ?? answer.diagnostic?.state ?? 'no answer'}`,
      );
      if (answer.ok && answer.tools?.length) setShowTools(true);
    }).then((ok) => {
      if (!ok) setTest('');
    });
  const toggle = () =>
    action.run(async () => {
      await api('PATCH', `/api/servers/${encodeURIComponent(name)}`, { enabled: !enabled });
      props.onChange();
    });
  const remove = async () => {
    await action.run(async () => {
      await api('DELETE', `/api/servers/${encodeURIComponent(name)}`);
      props.onChange();
    });
  };
  const target = transport === 'stdio' ? [config.command, ...(config.args ?? [])].filter(Boolean).join(' ') : config.url;
  const secrets = [...Object.keys(config.env ?? {}), ...Object.keys(config.headers ?? {})];
  return (
    <article class="card server" aria-labelledby={id}>
      <h3 id={id}>
        {name} <StateBadge state={enabled ? state : 'disabled'} />
      </h3>
      <p class="muted">
        {transport}
        {target ? (
          <>
            {' '}
            · <code>{target}</code>
          </>
        ) : null}
        {toolCount === undefined ? '' : ` · ${toolCount} tool${toolCount === 1 ? '' : 's'}`}
        {secrets.length ? ` · secrets set: ${secrets.join(', ')} (values hidden)` : ''}
      </p>
      {error ? <p class="error-text">{error}</p> : null}
      <div class="actions">
        <button type="button" disabled={action.busy} onClick={runTest} aria-label={`Test ${name}`}>
          Test
        </button>
        <button type="button" disabled={action.busy} onClick={toggle} aria-label={`${enabled ? 'Disable' : 'Enable'} ${name}`}>
          {enabled ? 'Disable' : 'Enable'}
        </button>
        {tools.length ? (
          <button type="button" aria-expanded={showTools} onClick={() => setShowTools(!showTools)} aria-label={`Tools of ${name}`}>
            Tools
          </button>
        ) : null}
        <ConfirmButton label="Remove" name={`Remove ${name}`} danger question={`Remove ${name}? Its tools leave this host.`} confirmLabel={`Remove ${name} now`} onConfirm={remove} />
      </div>
      <p role="status" aria-live="polite" class="test-result">
        {test}
      </p>
      <ErrorNote error={action.error} />
      {tools.length === 0 ? <p class="hint">Test the server to list its tools and choose per tool.</p> : null}
      {showTools && tools.length ? (
        <table class="tools">
          <caption>Tools of {name}</caption>
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Enabled</th>
              <th scope="col">Approval</th>
            </tr>
          </thead>
          <tbody>
            {tools.map((tool) => (
              <ToolRow key={tool.name} server={name} tool={tool} onChange={props.onChange} />
            ))}
          </tbody>
        </table>
      ) : null}
    </article>
  );
}

export function ServersPage() {
  const servers = useLoad(() => api<ServersView>('GET', '/api/servers'));
  const { status } = useLive();
  const reload = () => {
    void servers.reload();
    void refreshLive();
  };
  const liveOf = (name: string) => status?.mcpClient?.servers.find((server) => server.server.toLowerCase() === name.toLowerCase());
  const restartNeeded = servers.value?.restartNeeded ?? [];
  return (
    <>
      <PageHeader title="MCP servers">Servers whose tools this host imports and serves as &lt;server&gt;__&lt;tool&gt; (with re-export on in Settings).</PageHeader>
      {status?.mcpClient && !status.mcpClient.reexport ? <p class="info">Re-export is off: these servers are configured but their tools are not served. Turn it on in Settings.</p> : null}
      {restartNeeded.length ? (
        <p class="restart" role="status">
          <strong>Restart needed:</strong> server changes apply when capnode restarts (the host connects its servers when it starts).
        </p>
      ) : null}
      <Section title="Configured servers">
        {servers.value ? (
          servers.value.servers.length ? (
            servers.value.servers.map((item) => <ServerCard key={item.name} item={item} live={liveOf(item.name)} policy={servers.value?.toolPolicy} onChange={reload} />)
          ) : (
            <p class="empty">No MCP servers are configured.</p>
          )
        ) : servers.error ? null : (
          <Loading what="servers" />
        )}
        <ErrorNote error={servers.error} />
      </Section>
      <AddServerForm onAdded={reload} />
      <DiscoveredServers onImported={reload} />
    </>
  );
}
