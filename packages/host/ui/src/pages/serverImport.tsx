// Importing servers from the MCP configs of other clients on this machine (Claude Desktop, Claude
// Code, Cursor, VS Code): listed by name and kind only, never their env, headers or arguments.
import { useState } from 'preact/hooks';
import { api, isMissingRoute } from '../api.js';
import { ErrorNote, Loading, Notice, Section, useAction, useLoad } from '../components.js';
import type { DiscoveredConfig, DiscoveredView, ServerImportResult } from '../types.js';

export function DiscoveredServers(props: { onImported: () => void }) {
  const found = useLoad(() => api<DiscoveredView>('GET', '/api/servers/discovered'));
  const action = useAction();
  const [notice, setNotice] = useState('');
  const configs = found.value?.files ?? [];
  const importAll = (config: DiscoveredConfig, names?: string[]) =>
    action.run(async () => {
      const answer = await api<ServerImportResult>('POST', '/api/servers/import', { path: config.path, ...(names ? { names } : {}) });
      const imported = answer.imported?.length ? `Imported ${answer.imported.join(', ')} from ${config.path}.` : `Nothing new to import from ${config.path}.`;
      setNotice(`${imported}${answer.skipped?.length ? ` Already configured: ${answer.skipped.join(', ')}.` : ''}`);
      await found.reload();
      props.onImported();
    });
  return (
    <Section title="Import from other clients">
      {found.value === undefined && !found.error ? <Loading what="client configs on this machine" /> : null}
      {found.value && configs.length === 0 ? <p class="muted">No Claude Desktop, Cursor, VS Code or .mcp.json configs with servers were found.</p> : null}
      {configs.map((config) => (
        <div key={config.path} class="discovered">
          <h3>
            {config.client ?? 'Config'} <code>{config.path}</code>
          </h3>
          <ul>
            {config.servers.map((server) => (
              <li key={server.name}>
                <code>{server.name}</code> <span class="muted">{server.transport ?? ''}</span>{' '}
                {server.configured ? (
                  <span class="muted">(already configured)</span>
                ) : (
                  <button type="button" disabled={action.busy} onClick={() => importAll(config, [server.name])} aria-label={`Import ${server.name} from ${config.path}`}>
                    Import
                  </button>
                )}
              </li>
            ))}
          </ul>
          {config.error ? <p class="error-text">{config.error}</p> : null}
          {config.issues?.length ? (
            <ul class="warnings">
              {config.issues.map((issue) => (
                <li key={issue}>{issue}</li>
              ))}
            </ul>
          ) : null}
          {config.servers.some((server) => !server.configured) ? (
            <button type="button" disabled={action.busy} onClick={() => importAll(config)} aria-label={`Import all from ${config.path}`}>
              Import all
            </button>
          ) : null}
        </div>
      ))}
      {isMissingRoute(found.error) ? <p class="muted">This host cannot look for other clients' configs yet.</p> : <ErrorNote error={found.error} />}
      <ErrorNote error={action.error} />
      <Notice>{notice}</Notice>
    </Section>
  );
}
