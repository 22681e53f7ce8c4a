// Connect a client: every client the host knows, its ready snippet with Copy, and "Add to <client>",
// which shows the change to the client's config file first and writes it only when confirmed.
import { useState } from 'preact/hooks';
import { api, isMissingRoute } from '../api.js';
import { CopyButton, ErrorNote, Loading, Notice, PageHeader, useAction, useLoad } from '../components.js';
import type { ClientPreviewView, ClientsView, ClientView, ClientWriteView } from '../types.js';

function ClientCard(props: { client: ClientView; onWritten: () => void }) {
  const { client } = props;
  const [preview, setPreview] = useState<ClientPreviewView | undefined>(undefined);
  const [written, setWritten] = useState<ClientWriteView | undefined>(undefined);
  const action = useAction();
  const id = `client-${client.id}`;
  const snippet = typeof client.snippet === 'string' ? client.snippet : JSON.stringify(client.snippet, null, 2);
  const command = client.command?.map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)).join(' ');
  // Snippet and command show the token masked; Copy asks for the real one and puts it in.
  const reveal = (text: string) => () =>
    client.tokenMask === undefined || !text.includes(client.tokenMask)
      ? Promise.resolve(text)
      : api<{ token: string }>('POST', `/api/clients/${encodeURIComponent(client.id)}/token`).then((answer) => text.split(client.tokenMask!).join(answer.token));
  const showDiff = () =>
    action.run(async () => {
      setWritten(undefined);
      setPreview(await api<ClientPreviewView>('POST', `/api/clients/${encodeURIComponent(client.id)}/preview`));
    });
  const write = () =>
    action.run(async () => {
      setWritten(await api<ClientWriteView>('POST', `/api/clients/${encodeURIComponent(client.id)}/write`, preview?.before === undefined ? {} : { expected: preview.before }));
      setPreview(undefined);
      props.onWritten();
    });
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{client.name}</h2>
      <p class="muted">
        {client.configured ? 'Already points at this host.' : 'Not set up yet.'}
        {client.configPath ? (
          <>
            {' '}
            Config file: <code>{client.configPath}</code>
          </>
        ) : null}
      </p>
      {client.instructions?.length ? (
        <ul class="instructions">
          {client.instructions.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      ) : null}
      <pre class="snippet" aria-label={`${client.name} snippet`}>
        {snippet}
      </pre>
      {command ? (
        <p>
          Or run <code>{command}</code> <CopyButton text={reveal(command)} label="Copy command" name={`Copy the ${client.name} command`} />
        </p>
      ) : null}
      <div class="actions">
        <CopyButton text={reveal(snippet)} name={`Copy ${client.name} snippet`} />
        <button type="button" class="primary" disabled={action.busy} onClick={showDiff}>
          Add to {client.name}
        </button>
      </div>
      {preview && preview.changed === false ? (
        <Notice>
          {preview.path} already points at this host; nothing to change.
        </Notice>
      ) : null}
      {preview && preview.changed !== false ? (
        <div class="preview" role="region" aria-label={`Change to ${preview.path}`}>
          <p>
            This change will be written to <code>{preview.path}</code> (a backup is kept; your other entries stay):
          </p>
          <pre class="diff">{preview.diff}</pre>
          <div class="actions">
            <button type="button" class="primary" disabled={action.busy} onClick={write}>
              Write to {client.name} config
            </button>
            <button type="button" onClick={() => setPreview(undefined)}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      {written ? (
        <Notice>
          Written to {written.path}
          {written.backup ? ` (backup: ${written.backup})` : ''}. Restart {client.name} to pick it up.
        </Notice>
      ) : null}
      <ErrorNote error={action.error} />
    </section>
  );
}

export function ConnectPage() {
  const clients = useLoad(() => api<ClientsView>('GET', '/api/clients'));
  return (
    <>
      <PageHeader title="Connect a client">Point an MCP client at this host: copy its snippet, or let capnode add it to the client's config.</PageHeader>
      {clients.value ? clients.value.clients.map((client) => <ClientCard key={client.id} client={client} onWritten={() => void clients.reload()} />) : clients.error ? null : <Loading what="clients" />}
      {isMissingRoute(clients.error) ? <p class="empty">This host does not list client configs yet: run <code>capnode config &lt;client&gt;</code> in a terminal.</p> : <ErrorNote error={clients.error} />}
    </>
  );
}
