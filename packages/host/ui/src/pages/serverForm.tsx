// Adding an MCP server: stdio (command, arguments, env) or HTTP/SSE (URL, headers). Env and header
// values are write-only: typed into password fields, sent once, never shown again.
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { ErrorNote, Field, fieldMessage, Notice, Section, SelectField, useAction } from '../components.js';

interface Pair {
  key: string;
  value: string;
}

function splitArgs(text: string): string[] {
  // Whitespace-separated, with "double" or 'single' quotes grouping words.
  const args: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) args.push(match[1] ?? match[2] ?? match[3] ?? '');
  return args;
}

function Pairs(props: { title: string; keyLabel: string; pairs: Pair[]; onChange: (pairs: Pair[]) => void; error: string | undefined }) {
  const { pairs } = props;
  const update = (index: number, change: Partial<Pair>) => props.onChange(pairs.map((pair, at) => (at === index ? { ...pair, ...change } : pair)));
  return (
    <fieldset class="pairs">
      <legend>{props.title}</legend>
      {pairs.map((pair, index) => (
        <div class="inline" key={index}>
          <Field label={`${props.keyLabel} ${index + 1} name`}>{({ id }) => <input id={id} type="text" value={pair.key} autocomplete="off" onInput={(event) => update(index, { key: (event.currentTarget as HTMLInputElement).value })} />}</Field>
          <Field label={`${props.keyLabel} ${index + 1} value`}>
            {({ id }) => <input id={id} type="password" value={pair.value} autocomplete="new-password" onInput={(event) => update(index, { value: (event.currentTarget as HTMLInputElement).value })} />}
          </Field>
          <button type="button" aria-label={`Remove ${props.keyLabel.toLowerCase()} ${index + 1}`} onClick={() => props.onChange(pairs.filter((_, at) => at !== index))}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => props.onChange([...pairs, { key: '', value: '' }])}>
        Add {props.keyLabel.toLowerCase()}
      </button>
      {props.error ? <p class="field-error">{props.error}</p> : null}
    </fieldset>
  );
}

function toRecord(pairs: Pair[]): Record<string, string> | undefined {
  const entries = pairs.filter((pair) => pair.key.trim()).map((pair) => [pair.key.trim(), pair.value] as const);
  return entries.length ? Object.fromEntries(entries) : undefined;
}

type Transport = 'stdio' | 'http' | 'sse';

const TRANSPORTS: readonly (readonly [Transport, string])[] = [
  ['stdio', 'stdio (a local program)'],
  ['http', 'HTTP (streamable)'],
  ['sse', 'SSE (legacy)'],
];

export function AddServerForm(props: { onAdded: () => void }) {
  const [name, setName] = useState('');
  const [transport, setTransport] = useState<Transport>('stdio');
  const [command, setCommand] = useState('');
  const [args, setArgs] = useState('');
  const [url, setUrl] = useState('');
  const [env, setEnv] = useState<Pair[]>([]);
  const [headers, setHeaders] = useState<Pair[]>([]);
  const [notice, setNotice] = useState('');
  const action = useAction();
  const fields = action.error instanceof ApiError ? action.error.fields : [];
  const submit = (event: Event) => {
    event.preventDefault();
    setNotice('');
    const entry =
      transport === 'stdio'
        ? { name: name.trim(), transport, command: command.trim(), ...(args.trim() ? { args: splitArgs(args) } : {}), ...(toRecord(env) ? { env: toRecord(env) } : {}) }
        : { name: name.trim(), transport, url: url.trim(), ...(toRecord(headers) ? { headers: toRecord(headers) } : {}) };
    void action
      .run(async () => {
        await api('POST', '/api/servers', entry);
      })
      .then((ok) => {
        if (!ok) return;
        setNotice(`Added ${entry.name}.`);
        setName('');
        setCommand('');
        setArgs('');
        setUrl('');
        setEnv([]);
        setHeaders([]);
        props.onAdded();
      });
  };
  return (
    <Section title="Add a server">
      <form onSubmit={submit} aria-label="Add a server" noValidate>
        <Field label="Server name" hint="Letters, digits, - and _; tools appear as <name>__<tool>." error={fieldMessage(fields, 'name')}>
          {({ id, describedBy, invalid }) => <input id={id} type="text" value={name} aria-describedby={describedBy} aria-invalid={invalid || undefined} onInput={(event) => setName((event.currentTarget as HTMLInputElement).value)} />}
        </Field>
        <SelectField label="Transport" value={transport} options={TRANSPORTS} error={fieldMessage(fields, 'transport')} onChange={(value) => setTransport(value as Transport)} />
        {transport === 'stdio' ? (
          <>
            <Field label="Command" hint="The program to start, e.g. npx or /usr/bin/node" error={fieldMessage(fields, 'command')}>
              {({ id, describedBy, invalid }) => <input id={id} type="text" value={command} aria-describedby={describedBy} aria-invalid={invalid || undefined} onInput={(event) => setCommand((event.currentTarget as HTMLInputElement).value)} />}
            </Field>
            <Field label="Arguments" hint='Separated by spaces; quote an argument with spaces: "my file"' error={fieldMessage(fields, 'args')}>
              {({ id, describedBy, invalid }) => <input id={id} type="text" value={args} aria-describedby={describedBy} aria-invalid={invalid || undefined} onInput={(event) => setArgs((event.currentTarget as HTMLInputElement).value)} />}
            </Field>
            <Pairs title="Environment variables (values are write-only)" keyLabel="Variable" pairs={env} onChange={setEnv} error={fieldMessage(fields, 'env')} />
          </>
        ) : (
          <>
            <Field label="Server URL" hint="http(s)://…" error={fieldMessage(fields, 'url')}>
              {({ id, describedBy, invalid }) => <input id={id} type="url" value={url} aria-describedby={describedBy} aria-invalid={invalid || undefined} onInput={(event) => setUrl((event.currentTarget as HTMLInputElement).value)} />}
            </Field>
            <Pairs title="Headers (values are write-only)" keyLabel="Header" pairs={headers} onChange={setHeaders} error={fieldMessage(fields, 'headers')} />
          </>
        )}
        <button type="submit" class="primary" disabled={action.busy || !name.trim()}>
          Add server
        </button>
        <ErrorNote error={action.error} />
        <Notice>{notice}</Notice>
      </form>
    </Section>
  );
}
