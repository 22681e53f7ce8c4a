// OpenAgent: the device-level switch of OpenAgent's client capabilities and the channel's live state
// (phase, generation, connection, running calls, catalog), from the status stream.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, Facts, formatTime, Loading, Notice, PageHeader, Section, StateBadge, Toggle, useAction } from '../components.js';
import { refreshLive, useLive } from '../live.js';

export function OpenAgentPage() {
  const { status } = useLive();
  const channel = status?.openagent;
  const change = useAction();
  const [notice, setNotice] = useState('');
  const toggle = (enabled: boolean) =>
    change.run(async () => {
      setNotice('');
      await api('PATCH', '/api/settings', { openagent: { enabled } });
      setNotice(enabled ? 'On: capnode connects to the OpenAgent server.' : 'Off: the channel is closed and running calls were cancelled.');
      void refreshLive();
    });
  return (
    <>
      <PageHeader title="OpenAgent">
        Let an OpenAgent server run this machine's tools for your turns (client capabilities). Off until you turn it on; turning it off closes the channel and cancels running calls.
      </PageHeader>
      <Section title="Client capabilities">
        {channel ? (
          <>
            <Toggle label="Allow OpenAgent to use this machine's tools" checked={channel.enabled} disabled={change.busy} onChange={(enabled) => void toggle(enabled)} hint="The same switch as capnode openagent enable / disable." />
            <Facts
              rows={[
                ['Phase', <StateBadge state={channel.phase} />],
                ['Server', channel.url ? <code>{channel.url}</code> : 'not set (openagent.url in settings.json)'],
                ['Connected', channel.connected ? 'yes' : 'no'],
                ['Generation', String(channel.generation)],
                ['Instance', <code>{channel.clientInstanceId}</code>],
                ['Calls running', String(channel.activeCalls)],
                ['Catalog', `${channel.catalog.servers} servers, ${channel.catalog.tools} tools`],
                ['Connected since', formatTime(channel.connectedAt)],
                ['Next retry', formatTime(channel.nextRetryAt)],
                ['Last error', channel.lastError ? <span class="error-text">{channel.lastError}</span> : undefined],
                ['Detail', channel.detail],
              ]}
            />
          </>
        ) : (
          <Loading what="the OpenAgent channel state" />
        )}
        <ErrorNote error={change.error} />
        {notice ? <Notice>{notice}</Notice> : null}
      </Section>
    </>
  );
}
