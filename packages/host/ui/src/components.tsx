// Small building blocks shared by the pages: loaders, notices, fields with their errors, copy and
// confirm buttons, state badges. Every control is a real element with a visible label or name.
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { describeError, type FieldError } from './api.js';

/** Loads `load()` on mount and on `reload()`; keeps the last value while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[] = []): { value: T | undefined; error: unknown; loading: boolean; reload: () => Promise<void> } {
  const [value, setValue] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(async () => {
    setLoading(true);
    try {
      setValue(await loadRef.current());
      setError(undefined);
    } catch (failure) {
      setError(failure);
    } finally {
      setLoading(false);
    }
  }, []);
  useEffect(() => {
    void reload();
  }, deps);
  return { value, error, loading, reload };
}

/** Runs an action, tracking busy state and its error for the control that started it. */
export function useAction(): { busy: boolean; error: unknown; run: (action: () => Promise<void>) => Promise<boolean>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(undefined) };
}

export function PageHeader(props: { title: string; children?: ComponentChildren }) {
  return (
    <header class="page-header">
      <h1 id="page-title" tabIndex={-1}>
        {props.title}
      </h1>
      {props.children ? <p class="lead">{props.children}</p> : null}
    </header>
  );
}

/** A titled card; `wide` spans every column of a grid of cards. */
export function Section(props: { title: string; children: ComponentChildren; id?: string; wide?: boolean }) {
  const id = useId();
  return (
    <section class={props.wide ? 'card wide' : 'card'} aria-labelledby={id} {...(props.id ? { id: props.id } : {})}>
      <h2 id={id}>{props.title}</h2>
      {props.children}
    </section>
  );
}

/** A failure said plainly; `role="alert"` so screen readers hear it when it appears. */
export function ErrorNote(props: { error: unknown; id?: string }) {
  if (props.error === undefined || props.error === null) return null;
  return (
    <p class="error" role="alert" {...(props.id ? { id: props.id } : {})}>
      {describeError(props.error)}
    </p>
  );
}

/** A polite live message (saved, copied, ...). */
export function Notice(props: { children?: ComponentChildren }) {
  return (
    <p class="notice" role="status" aria-live="polite">
      {props.children}
    </p>
  );
}

export function Loading(props: { what: string }) {
  return <p class="muted">Loading {props.what}…</p>;
}

/** The field errors whose path is `path` (or starts with `path.`), joined. */
export function fieldMessage(fields: readonly FieldError[] | undefined, ...paths: string[]): string | undefined {
  const hits = (fields ?? []).filter((field) => paths.some((path) => field.path === path || field.path.startsWith(`${path}.`) || field.path.startsWith(`${path}[`)));
  return hits.length ? hits.map((field) => field.message).join('; ') : undefined;
}

/** An id for a control, and its hint and error paragraphs with the `aria-describedby` that names them. */
function useDescribedControl(hint: ComponentChildren, error: string | undefined): { id: string; describedBy: string | undefined; notes: ComponentChildren } {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ') || undefined;
  const notes = (
    <>
      {hint ? (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </>
  );
  return { id, describedBy, notes };
}

interface FieldProps {
  label: string;
  hint?: ComponentChildren;
  error?: string | undefined;
  children: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ComponentChildren;
}

/** A labelled control with its hint and its error, tied by `for`, `aria-describedby` and `aria-invalid`. */
export function Field(props: FieldProps) {
  const { id, describedBy, notes } = useDescribedControl(props.hint, props.error);
  return (
    <div class={`field${props.error ? ' field-invalid' : ''}`}>
      <label for={id}>{props.label}</label>
      {props.children({ id, describedBy, invalid: Boolean(props.error) })}
      {notes}
    </div>
  );
}

/** A labelled `<select>` of `options` (`[value, label]`), with its hint and error as {@link Field} ties them. */
export function SelectField(props: { label: string; value: string | undefined; options: readonly (readonly [string, string])[]; onChange: (value: string) => void; hint?: ComponentChildren; error?: string | undefined }) {
  return (
    <Field label={props.label} hint={props.hint} error={props.error}>
      {({ id, describedBy, invalid }) => (
        <select id={id} value={props.value} aria-describedby={describedBy} aria-invalid={invalid || undefined} onChange={(event) => props.onChange((event.currentTarget as HTMLSelectElement).value)}>
          {props.options.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** A checkbox with its label after it. */
export function Toggle(props: { label: string; checked: boolean; onChange: (checked: boolean) => void; hint?: string; error?: string | undefined; disabled?: boolean }) {
  const { id, describedBy, notes } = useDescribedControl(props.hint, props.error);
  return (
    <div class="toggle">
      <input
        type="checkbox"
        id={id}
        checked={props.checked}
        disabled={props.disabled}
        aria-describedby={describedBy}
        aria-invalid={props.error ? true : undefined}
        onChange={(event) => props.onChange((event.currentTarget as HTMLInputElement).checked)}
      />
      <label for={id}>{props.label}</label>
      {notes}
    </div>
  );
}

async function writeClipboard(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    try {
      await navigator.clipboard.writeText(text);
      return;
    } catch {
      // Permission refused (headless, policy): fall back to a selected textarea.
    }
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'offscreen';
  document.body.append(area);
  area.select();
  const copied = document.execCommand('copy');
  area.remove();
  if (!copied) throw new Error('The browser refused to copy; select the text and copy it by hand.');
}

/** "Copy" (with an optional longer accessible name); says "Copied" for a moment. */
export function CopyButton(props: { text: string | (() => Promise<string>); label?: string; name?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const [error, setError] = useState<unknown>(undefined);
  const copy = async () => {
    try {
      const text = typeof props.text === 'string' ? props.text : await props.text();
      await writeClipboard(text);
      setState('copied');
      setError(undefined);
      setTimeout(() => setState('idle'), 2000);
    } catch (failure) {
      setState('failed');
      setError(failure);
    }
  };
  const label = props.label ?? 'Copy';
  return (
    <span class="copy">
      <button type="button" onClick={copy} aria-label={props.name}>
        {label}
      </button>
      <span role="status" aria-live="polite" class="copy-state">
        {state === 'copied' ? 'Copied' : state === 'failed' ? describeError(error) : ''}
      </span>
    </span>
  );
}

/**
 * A button that asks first: the first press shows the question with a confirm button and
 * "Cancel"; focus moves to the confirm button, Escape cancels.
 */
export function ConfirmButton(props: { label: string; name?: string; question: string; confirmLabel: string; onConfirm: () => unknown; danger?: boolean; disabled?: boolean }) {
  const [asking, setAsking] = useState(false);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const openerRef = useRef<HTMLButtonElement>(null);
  const questionId = useId();
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
  }, [asking]);
  const cancel = () => {
    setAsking(false);
    setTimeout(() => openerRef.current?.focus(), 0);
  };
  if (!asking) {
    return (
      <button type="button" ref={openerRef} class={props.danger ? 'danger' : undefined} aria-label={props.name} disabled={props.disabled} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <div class="confirm" role="group" aria-labelledby={questionId} onKeyDown={(event) => event.key === 'Escape' && cancel()}>
      <p id={questionId}>{props.question}</p>
      <button
        type="button"
        ref={confirmRef}
        class={props.danger ? 'danger' : 'primary'}
        onClick={async () => {
          setAsking(false);
          await props.onConfirm();
        }}
      >
        {props.confirmLabel}
      </button>
      <button type="button" onClick={cancel}>
        Cancel
      </button>
    </div>
  );
}

const STATE_TONES: Record<string, string> = {
  listening: 'ok',
  serving: 'ok',
  connected: 'ok',
  ready: 'ok',
  approved: 'ok',
  on: 'ok',
  starting: 'busy',
  connecting: 'busy',
  waiting: 'warn',
  pending: 'warn',
  paused: 'warn',
  error: 'bad',
  failed: 'bad',
  rejected: 'bad',
};

/** A state word with a colour that never carries the meaning alone (the word is the meaning). */
export function StateBadge(props: { state: string | undefined }) {
  const state = props.state ?? 'unknown';
  return <span class={`badge tone-${STATE_TONES[state] ?? 'off'}`}>{state}</span>;
}

/** A `<dl>` of label/value rows; rows whose value is undefined are left out. */
export function Facts(props: { rows: readonly [string, ComponentChildren | undefined][] }) {
  return (
    <dl class="facts">
      {props.rows
        .filter(([, value]) => value !== undefined && value !== null && value !== '')
        .map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
    </dl>
  );
}

export function formatTime(value: string | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString();
}
