// Gateway: connect this host to an OpenClaw gateway as a gateway node (URL and token), see the
// pairing state and its request id, and approve the pairing when this user is the gateway's operator.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { ErrorNote, Facts, Field, fieldMessage, formatTime, Loading, Notice, PageHeader, Section, StateBadge, useAction, useLoad } from '../components.js';
import { refreshLive, useLive } from '../live.js';
import type { GatewayPairResult, GatewaySaveResult, GatewayView } from '../types.js';

export function GatewayPage() {
  const gateway = useLoad(() => api<GatewayView>('GET', '/api/gateway'));
  const { status } = useLive();
  const [url, setUrl] = useState('');
  const [token, setToken] = useState('');
  const [notice, setNotice] = useState('');
  const save = useAction();
  const pair = useAction();
  useEffect(() => {
    if (gateway.value?.configured?.url !== undefined) setUrl(gateway.value.configured.url);
  }, [gateway.value?.configured?.url]);
  // The node's live state comes from the status stream; the gateway route gives the saved settings.
  const node = status?.node ?? gateway.value?.node;
  const pairing = node?.pairing;
  const restartNeeded = gateway.value?.restartNeeded ?? [];
  const fields = save.error instanceof ApiError ? save.error.fields : [];
  const submit = (event: Event) => {
    event.preventDefault();
    setNotice('');
    void save.run(async () => {
      const answer = await api<GatewaySaveResult>('PUT', '/api/gateway', { url: url.trim(), ...(token ? { token } : {}) });
      setToken('');
      setNotice(answer.restartNeeded?.length ? 'Saved. Restart capnode to connect with these settings.' : 'Saved. The gateway node connects with these settings.');
      await gateway.reload();
      void refreshLive();
    });
  };
  const approve = () =>
    pair.run(async () => {
      const answer = await api<GatewayPairResult>('POST', '/api/gateway/pair');
      setNotice(answer.approved?.length ? `Pairing approved (request ${answer.approved.map((request) => request.requestId).join(', ')}).` : 'Nothing was waiting for approval; the pairing may already be approved.');
      await gateway.reload();
      void refreshLive();
    });
  return (
    <>
      <PageHeader title="Gateway">Connect this machine to an OpenClaw gateway as a gateway node. The local MCP server works without one.</PageHeader>
      {restartNeeded.length ? (
        <p class="restart" role="status">
          <strong>Restart needed:</strong> the gateway settings ({restartNeeded.join(', ')}) take effect when capnode restarts.
        </p>
      ) : null}
      <Section title="Gateway node state">
        {node ? (
          <Facts
            rows={[
              ['State', <StateBadge state={node.enabled ? node.state : 'off'} />],
              ['Gateway', node.url ? <code>{node.url}</code> : undefined],
              ['Detail', node.detail],
              ['Pairing', pairing ? <StateBadge state={pairing.state} /> : 'not requested'],
              ['Pairing request id', pairing?.requestId ? <code>{pairing.requestId}</code> : undefined],
              ['Last error', node.lastError ? <span class="error-text">{`${node.lastError.message} (${node.lastError.code})`}</span> : undefined],
              ['Next retry', formatTime(node.nextRetryAt)],
            ]}
          />
        ) : (
          <Loading what="the gateway node state" />
        )}
        {pairing?.state === 'device-pending' || pairing?.state === 'commands-pending' ? (
          <div class="actions">
            <button type="button" class="primary" disabled={pair.busy} onClick={approve} aria-describedby="pair-hint">
              Approve pairing
            </button>
            <p class="hint" id="pair-hint">
              Works when you are an operator of this gateway (its token is saved here); otherwise ask the operator to approve request {pairing.requestId ?? 'shown above'}.
            </p>
          </div>
        ) : null}
        <ErrorNote error={pair.error} />
      </Section>
      <Section title="Connect">
        {gateway.value || gateway.error ? (
          <form onSubmit={submit} aria-label="Gateway connection" noValidate>
            <Field label="Gateway URL" hint="ws:// or wss://, e.g. ws://127.0.0.1:18789" error={fieldMessage(fields, 'url', 'gateway.url')}>
              {({ id, describedBy, invalid }) => <input id={id} type="url" value={url} aria-describedby={describedBy} aria-invalid={invalid || undefined} onInput={(event) => setUrl((event.currentTarget as HTMLInputElement).value)} />}
            </Field>
            <Field label="Gateway token" hint={gateway.value?.configured?.hasToken ? 'A token is saved for the gateway above; leave empty to keep it. A new gateway URL needs its token again.' : 'The gateway\'s shared token (write-only: it is never shown again).'} error={fieldMessage(fields, 'token', 'gateway.token')}>
              {({ id, describedBy, invalid }) => (
                <input id={id} type="password" autocomplete="off" value={token} aria-describedby={describedBy} aria-invalid={invalid || undefined} onInput={(event) => setToken((event.currentTarget as HTMLInputElement).value)} />
              )}
            </Field>
            <button type="submit" class="primary" disabled={save.busy || !url.trim()}>
              Connect to gateway
            </button>
            <ErrorNote error={save.error} />
          </form>
        ) : (
          <Loading what="the gateway settings" />
        )}
        <ErrorNote error={gateway.error} />
        <Notice>{notice}</Notice>
      </Section>
    </>
  );
}
