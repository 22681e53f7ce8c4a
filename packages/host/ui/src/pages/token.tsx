// Token: the MCP bearer token masked, Reveal, Copy, Rotate (confirmed) and the file it lives in.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmButton, CopyButton, ErrorNote, Facts, Loading, Notice, PageHeader, Section, useAction, useLoad } from '../components.js';
import type { TokenView } from '../types.js';

export function TokenPage() {
  const token = useLoad(() => api<TokenView>('GET', '/api/token'));
  const [revealed, setRevealed] = useState<string | undefined>(undefined);
  const [notice, setNotice] = useState('');
  const action = useAction();
  const reveal = () => api<{ token: string }>('POST', '/api/token/reveal').then((answer) => answer.token);
  const rotate = () =>
    action.run(async () => {
      await api('POST', '/api/token/rotate');
      setRevealed(undefined);
      await token.reload();
      setNotice('Token rotated. Clients that use the old token are refused until they get the new one.');
    });
  return (
    <>
      <PageHeader title="Token">MCP clients send this bearer token. Prefer pointing them at the file; copy the value only for clients that need it literally.</PageHeader>
      <Section title="MCP token">
        {token.value ? (
          <>
            <Facts
              rows={[
                ['Token', <code class="token" data-testid="token-value">{revealed ?? token.value.masked}</code>],
                ['File', <code>{token.value.path}</code>],
              ]}
            />
            <div class="actions">
              <button type="button" aria-pressed={revealed !== undefined} disabled={action.busy} onClick={() => (revealed ? setRevealed(undefined) : void action.run(async () => setRevealed(await reveal())))}>
                {revealed ? 'Hide' : 'Reveal'}
              </button>
              <CopyButton text={() => (revealed ? Promise.resolve(revealed) : reveal())} name="Copy token" />
              <ConfirmButton label="Rotate" name="Rotate token" danger question="Rotate the token? Every client that uses it must get the new one." confirmLabel="Rotate now" onConfirm={rotate} />
            </div>
          </>
        ) : token.error ? null : (
          <Loading what="the token" />
        )}
        <Notice>{notice}</Notice>
        <ErrorNote error={action.error ?? token.error} />
      </Section>
    </>
  );
}
