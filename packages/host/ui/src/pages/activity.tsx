// Activity: the audit log (tool calls, and changes made from the dashboard or admin API), newest first, filtered by tool, transport and outcome, a page at a time.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, Field, formatTime, Loading, PageHeader, SelectField, useLoad } from '../components.js';
import type { ActivityView, AuditRecordView } from '../types.js';

const PAGE_SIZE = 25;
const TRANSPORTS: readonly [string, string][] = [
  ['', 'any'],
  ['mcp-http', 'MCP over HTTP'],
  ['mcp-stdio', 'MCP over stdio'],
  ['gateway', 'gateway'],
  ['cli', 'CLI'],
  ['internal', 'internal'],
  ['dashboard', 'dashboard'],
  ['admin', 'admin API (CLI, tray)'],
];
const OUTCOMES = ['', 'ok', 'error', 'denied', 'timeout', 'invalid_arguments', 'approval_pending', 'consent_required', 'unavailable', 'invalid_settings'];
const OUTCOME_OPTIONS = OUTCOMES.map((value) => [value, value === '' ? 'any' : value === 'error' ? 'any failure' : value] as const);

/** What a control record (`capnode.*`) did, in words; the command name for a tool call. */
const CONTROL_LABELS: Readonly<Record<string, string>> = {
  'capnode.settings': 'settings change',
  'capnode.token.rotate': 'MCP token rotated',
  'capnode.token.reveal': 'MCP token revealed',
  'capnode.session.signin': 'dashboard signed in',
  'capnode.session.signout': 'dashboard signed out',
};

/** The Tool cell: the command, and for a settings change the paths it changed (never values). */
function CommandCell({ record }: { record: AuditRecordView }) {
  const control = record.transport === 'dashboard' || record.transport === 'admin' ? CONTROL_LABELS[record.command] : undefined;
  return (
    <td>
      <code>{record.command}</code>
      {control ? <span class="muted">{` ${control}`}</span> : null}
      {record.changed?.length ? (
        <ul class="changed-paths" aria-label={record.outcome === 'ok' ? 'Settings changed' : 'Settings refused'}>
          {record.changed.map((path, index) => (
            <li key={index}>
              <code>{path}</code>
            </li>
          ))}
        </ul>
      ) : null}
    </td>
  );
}

interface Filters {
  tool: string;
  transport: string;
  outcome: string;
}

function query(filters: Filters, cursor: string | undefined): string {
  const params = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (filters.tool.trim()) params.set('tool', filters.tool.trim());
  if (filters.transport) params.set('transport', filters.transport);
  if (filters.outcome) params.set('outcome', filters.outcome);
  if (cursor) params.set('cursor', cursor);
  return `/api/activity?${params}`;
}

export function ActivityPage() {
  const [draft, setDraft] = useState<Filters>({ tool: '', transport: '', outcome: '' });
  const [filters, setFilters] = useState<Filters>(draft);
  // Cursors of the pages before the current one (the first page has none).
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => api<ActivityView>('GET', query(filters, cursor)), [filters, cursor]);
  const apply = (event: Event) => {
    event.preventDefault();
    setFilters(draft);
    setCursors([undefined]);
  };
  const records = page.value?.records ?? [];
  return (
    <>
      <PageHeader title="Activity">Every tool call this host ran or refused, and every change made from this dashboard or the admin API (settings, token), newest first. Arguments are never logged, only their hash; settings changes only by the names of the settings, never their values.</PageHeader>
      <form class="filters card" onSubmit={apply} aria-label="Activity filters">
        <Field label="Tool">{({ id }) => <input id={id} type="search" value={draft.tool} placeholder="system.run or server__" onInput={(event) => setDraft({ ...draft, tool: (event.currentTarget as HTMLInputElement).value })} />}</Field>
        <SelectField label="Transport" value={draft.transport} options={TRANSPORTS} onChange={(transport) => setDraft({ ...draft, transport })} />
        <SelectField label="Outcome" value={draft.outcome} options={OUTCOME_OPTIONS} onChange={(outcome) => setDraft({ ...draft, outcome })} />
        <button type="submit">Apply filters</button>
      </form>
      <ErrorNote error={page.error} />
      {page.value === undefined && !page.error ? <Loading what="activity" /> : null}
      {page.value ? (
        records.length ? (
          <table class="activity">
            <caption class="visually-hidden">Audit log, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Tool</th>
                <th scope="col">Transport</th>
                <th scope="col">Client</th>
                <th scope="col">Outcome</th>
                <th scope="col">Duration</th>
              </tr>
            </thead>
            <tbody>
              {records.map((record, index) => (
                <tr key={`${record.time}-${index}`}>
                  <td>{formatTime(record.time)}</td>
                  <CommandCell record={record} />
                  <td>{record.transport}</td>
                  <td>{clientLabel(record)}</td>
                  <td class={record.outcome === 'ok' ? 'ok-text' : 'error-text'}>{record.outcome}</td>
                  <td>{`${Math.round(record.durationMs)} ms`}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p class="empty">No activity{filters.tool || filters.transport || filters.outcome ? ' matches these filters' : ' yet'}.</p>
        )
      ) : null}
      <nav aria-label="Activity pages" class="pager">
        <button type="button" disabled={cursors.length <= 1 || page.loading} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </button>
        <span>Page {cursors.length}</span>
        <button type="button" disabled={!page.value?.nextCursor || page.loading} onClick={() => setCursors([...cursors, page.value?.nextCursor])}>
          Older
        </button>
      </nav>
    </>
  );
}

/** The client a record shows: its token's name, with the self-reported name beside it when it differs. */
function clientLabel(record: { readonly client?: string; readonly caller?: string }): string {
  if (record.client === undefined) return record.caller ?? '—';
  return record.caller === undefined || record.caller === record.client ? record.client : `${record.client} (says ${record.caller})`;
}
