// Settings: the MCP × gateway node matrix, the port, the exec policy (mode, allowlist, a tester),
// re-export and consent per category. The host validates; its per-field errors show beside each
// field, and what needs a restart is said plainly.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { ErrorNote, Field, fieldMessage, Loading, Notice, PageHeader, Section, SelectField, Toggle, useAction, useLoad } from '../components.js';
import { refreshLive } from '../live.js';
import { ExecTester } from './execTester.js';

type AllowlistEntry = string | { readonly pattern: string; readonly cwd?: string; readonly env?: Readonly<Record<string, string>> };

interface SettingsView {
  readonly mcp: { readonly enabled: boolean; readonly port: number; readonly host?: string };
  readonly gateway: { readonly enabled: boolean; readonly url?: string };
  readonly execApprovals: { readonly mode: string; readonly allowlist: readonly AllowlistEntry[] };
  readonly mcpClient?: { readonly reexport?: boolean };
  readonly consent?: Readonly<Record<string, string>>;
}

interface Draft {
  mcpEnabled: boolean;
  gatewayNodeEnabled: boolean;
  port: string;
  execMode: string;
  allowlist: AllowlistEntry[];
  reexport: boolean;
  consent: Record<string, string>;
}

const EXEC_MODES: readonly [string, string][] = [
  ['ask', 'Ask — commands not allowlisted wait for an answer'],
  ['allowlist', 'Allowlist — only allowlisted commands run'],
  ['deny', 'Deny — no command runs'],
  ['full', 'Full — every command runs, nobody is asked'],
];

const CONSENT_CHOICES: readonly [string, string][] = [
  ['off', 'Off (refused)'],
  ['ask', 'Ask each time'],
  ['allow', 'Allow'],
];

const MATRIX: readonly [boolean, boolean, string][] = [
  [false, false, 'Nothing served (both off)'],
  [true, false, 'Local MCP server only, no gateway'],
  [false, true, 'Gateway node only, no local MCP server'],
  [true, true, 'Gateway node and local MCP server'],
];

/** The consent categories of the capability contract; a host may know more (its settings list them). */
const CONSENT_CATEGORIES = ['screen', 'camera', 'microphone', 'location', 'files', 'computer', 'browser'];

/** Every category to show, with its current choice (`off` when unset), when the host has consent settings at all. */
function consentOf(settings: SettingsView): Record<string, string> {
  if (settings.consent === undefined || settings.consent === null || typeof settings.consent !== 'object') return {};
  const categories = [...new Set([...CONSENT_CATEGORIES, ...Object.keys(settings.consent).filter((key) => key !== 'allowed')])];
  return Object.fromEntries(categories.map((category) => [category, settings.consent?.[category] ?? 'off']));
}

function toDraft(settings: SettingsView): Draft {
  return {
    mcpEnabled: settings.mcp.enabled,
    gatewayNodeEnabled: settings.gateway.enabled,
    port: String(settings.mcp.port),
    execMode: settings.execApprovals.mode,
    allowlist: [...settings.execApprovals.allowlist],
    reexport: settings.mcpClient?.reexport ?? false,
    consent: consentOf(settings),
  };
}

function patternOf(entry: AllowlistEntry): string {
  return typeof entry === 'string' ? entry : entry.pattern;
}

/** The partial settings that differ from what was loaded. */
function changes(saved: SettingsView, draft: Draft): Record<string, unknown> {
  const patch: Record<string, Record<string, unknown>> = {};
  const put = (section: string, key: string, value: unknown) => {
    patch[section] = { ...patch[section], [key]: value };
  };
  if (draft.mcpEnabled !== saved.mcp.enabled) put('mcp', 'enabled', draft.mcpEnabled);
  if (draft.port !== String(saved.mcp.port)) put('mcp', 'port', /^\d+$/.test(draft.port.trim()) ? Number(draft.port.trim()) : draft.port);
  if (draft.gatewayNodeEnabled !== saved.gateway.enabled) put('gateway', 'enabled', draft.gatewayNodeEnabled);
  if (draft.execMode !== saved.execApprovals.mode) put('execApprovals', 'mode', draft.execMode);
  if (JSON.stringify(draft.allowlist) !== JSON.stringify(saved.execApprovals.allowlist)) put('execApprovals', 'allowlist', draft.allowlist);
  if (draft.reexport !== (saved.mcpClient?.reexport ?? false)) put('mcpClient', 'reexport', draft.reexport);
  const savedConsent = consentOf(saved);
  for (const [category, value] of Object.entries(draft.consent)) if (savedConsent[category] !== value) put('consent', category, value);
  return patch;
}

function ModeMatrix(props: { draft: Draft; set: (change: Partial<Draft>) => void; fields: readonly ApiError['fields'][number][] }) {
  const { draft } = props;
  return (
    <Section title="What this host serves">
      <Toggle label="Local MCP server (loopback HTTP)" checked={draft.mcpEnabled} onChange={(mcpEnabled) => props.set({ mcpEnabled })} error={fieldMessage(props.fields, 'mcp.enabled')} />
      <Toggle label="Gateway node (connect to an OpenClaw gateway)" checked={draft.gatewayNodeEnabled} onChange={(gatewayNodeEnabled) => props.set({ gatewayNodeEnabled })} error={fieldMessage(props.fields, 'gateway.enabled', 'gateway.url')} hint="Set the gateway URL on the Gateway page." />
      <table class="matrix">
        <caption>The two switches together</caption>
        <thead>
          <tr>
            <th scope="col">Local MCP server</th>
            <th scope="col">Gateway node</th>
            <th scope="col">This host then</th>
          </tr>
        </thead>
        <tbody>
          {MATRIX.map(([mcp, node, meaning]) => {
            const selected = mcp === draft.mcpEnabled && node === draft.gatewayNodeEnabled;
            return (
              <tr key={meaning} class={selected ? 'selected' : undefined} aria-current={selected ? 'true' : undefined}>
                <td>{mcp ? 'on' : 'off'}</td>
                <td>{node ? 'on' : 'off'}</td>
                <td>
                  {meaning}
                  {selected ? <strong> (selected)</strong> : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <Field label="MCP port" error={fieldMessage(props.fields, 'mcp.port')} hint="0 picks a free port at each start.">
        {({ id, describedBy, invalid }) => (
          <input id={id} type="text" inputMode="numeric" value={draft.port} aria-describedby={describedBy} aria-invalid={invalid || undefined} onInput={(event) => props.set({ port: (event.currentTarget as HTMLInputElement).value })} />
        )}
      </Field>
    </Section>
  );
}

function Allowlist(props: { draft: Draft; set: (change: Partial<Draft>) => void; error: string | undefined }) {
  const [pattern, setPattern] = useState('');
  const add = () => {
    const value = pattern.trim();
    if (!value) return;
    props.set({ allowlist: [...props.draft.allowlist, value] });
    setPattern('');
  };
  return (
    <div class="allowlist">
      <h3 id="allowlist-heading">Allowlist</h3>
      {props.draft.allowlist.length === 0 ? <p class="muted">No commands are allowlisted.</p> : null}
      <ul aria-labelledby="allowlist-heading">
        {props.draft.allowlist.map((entry, index) => (
          <li key={`${index}-${patternOf(entry)}`}>
            <code>{patternOf(entry)}</code>
            {typeof entry !== 'string' && entry.cwd ? <span class="muted"> in {entry.cwd}</span> : null}{' '}
            <button type="button" aria-label={`Remove ${patternOf(entry)} from the allowlist`} onClick={() => props.set({ allowlist: props.draft.allowlist.filter((_, at) => at !== index) })}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      <Field label="New allowlist pattern" hint="An executable path or glob and its arguments, e.g. /usr/bin/git status" error={props.error}>
        {({ id, describedBy, invalid }) => (
          <div class="inline">
            <input
              id={id}
              type="text"
              value={pattern}
              aria-describedby={describedBy}
              aria-invalid={invalid || undefined}
              onInput={(event) => setPattern((event.currentTarget as HTMLInputElement).value)}
              onKeyDown={(event) => {
                if (event.key === 'Enter') {
                  event.preventDefault();
                  add();
                }
              }}
            />
            <button type="button" onClick={add}>
              Add pattern
            </button>
          </div>
        )}
      </Field>
    </div>
  );
}

function Consent(props: { draft: Draft; set: (change: Partial<Draft>) => void; fields: readonly ApiError['fields'][number][] }) {
  const categories = Object.keys(props.draft.consent);
  if (categories.length === 0) return null;
  return (
    <Section title="Consent per category">
      {categories.map((category) => (
        <SelectField
          key={category}
          label={`Consent: ${category}`}
          value={props.draft.consent[category]}
          options={CONSENT_CHOICES}
          error={fieldMessage(props.fields, `consent.${category}`)}
          onChange={(value) => props.set({ consent: { ...props.draft.consent, [category]: value } })}
        />
      ))}
    </Section>
  );
}

export function SettingsPage() {
  const loaded = useLoad(() => api<{ settings: SettingsView; restartNeeded: string[] }>('GET', '/api/settings'));
  const [draft, setDraft] = useState<Draft | undefined>(undefined);
  const [restartNeeded, setRestartNeeded] = useState<string[]>([]);
  const [notice, setNotice] = useState('');
  const save = useAction();
  useEffect(() => {
    if (loaded.value) {
      setDraft(toDraft(loaded.value.settings));
      setRestartNeeded(loaded.value.restartNeeded);
    }
  }, [loaded.value]);
  if (!loaded.value || !draft) return <>{loaded.error ? <ErrorNote error={loaded.error} /> : <Loading what="settings" />}</>;
  const saved = loaded.value.settings;
  const set = (change: Partial<Draft>) => setDraft({ ...draft, ...change });
  const fields = save.error instanceof ApiError ? save.error.fields : [];
  const patch = changes(saved, draft);
  const dirty = Object.keys(patch).length > 0;
  const submit = (event: Event) => {
    event.preventDefault();
    setNotice('');
    void save.run(async () => {
      const answer = await api<{ settings: SettingsView; applied: string[]; restartNeeded: string[] }>('PATCH', '/api/settings', patch);
      setRestartNeeded(answer.restartNeeded);
      setNotice(`Saved.${answer.applied.length ? ` Applied now: ${answer.applied.join(', ')}.` : ''}`);
      await loaded.reload();
      void refreshLive();
    });
  };
  return (
    <>
      <PageHeader title="Settings">Changes are checked by the host before anything is written.</PageHeader>
      {restartNeeded.length ? (
        <p class="restart" role="status">
          <strong>Restart needed:</strong> capnode must be restarted for {restartNeeded.join(', ')} to take effect. Everything else is already applied.
        </p>
      ) : null}
      <form onSubmit={submit} aria-label="Settings" noValidate>
        <ModeMatrix draft={draft} set={set} fields={fields} />
        <Section title="Exec policy (system.run)">
          <SelectField label="Exec policy mode" value={draft.execMode} options={EXEC_MODES} error={fieldMessage(fields, 'execApprovals.mode')} onChange={(execMode) => set({ execMode })} />
          <Allowlist draft={draft} set={set} error={fieldMessage(fields, 'execApprovals.allowlist')} />
        </Section>
        <Section title="Imported MCP servers">
          <Toggle label="Re-export imported tools through this host" checked={draft.reexport} onChange={(reexport) => set({ reexport })} error={fieldMessage(fields, 'mcpClient.reexport', 'mcpClient')} hint="Serves the tools of the servers on the MCP servers page as <server>__<tool>." />
        </Section>
        <Consent draft={draft} set={set} fields={fields} />
        <div class="actions">
          <button type="submit" class="primary" disabled={!dirty || save.busy}>
            Save settings
          </button>
          <button type="button" disabled={!dirty || save.busy} onClick={() => setDraft(toDraft(saved))}>
            Discard changes
          </button>
        </div>
        <ErrorNote error={save.error} />
        <Notice>{notice}</Notice>
      </form>
      <ExecTester />
    </>
  );
}
