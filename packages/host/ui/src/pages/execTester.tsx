// "Would this command be allowed?": asks the host to judge a command line against the saved policy.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, Field, Section, useAction } from '../components.js';
import type { ExecTestResult } from '../types.js';

const WORDS: Record<string, string> = { allow: 'Allowed — it would run without asking', ask: 'Asks — it would wait for your answer', deny: 'Refused — it would not run' };

export function ExecTester() {
  const [command, setCommand] = useState('');
  const [cwd, setCwd] = useState('');
  const [answer, setAnswer] = useState<{ decision: string; reason?: string } | undefined>(undefined);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      setAnswer(await api<ExecTestResult>('POST', '/api/exec/test', { command, ...(cwd.trim() ? { cwd: cwd.trim() } : {}) }));
    });
  };
  return (
    <Section title="Would this command be allowed?">
      <form onSubmit={submit} aria-label="Exec policy tester" class="tester">
        <Field label="Command to test" hint="Checked against the saved policy, e.g. /usr/bin/git status">
          {({ id, describedBy }) => <input id={id} type="text" value={command} aria-describedby={describedBy} onInput={(event) => setCommand((event.currentTarget as HTMLInputElement).value)} />}
        </Field>
        <Field label="Working directory (optional)">{({ id }) => <input id={id} type="text" value={cwd} onInput={(event) => setCwd((event.currentTarget as HTMLInputElement).value)} />}</Field>
        <button type="submit" disabled={!command.trim() || action.busy}>
          Test command
        </button>
      </form>
      <p role="status" aria-live="polite" class={answer ? `verdict verdict-${answer.decision}` : 'verdict'} data-testid="exec-verdict">
        {answer ? `${WORDS[answer.decision] ?? answer.decision}${answer.reason ? ` (${answer.reason.replace(/^(allowed|asks|refused):\s*/, '')})` : ''}` : ''}
      </p>
      <ErrorNote error={action.error} />
    </Section>
  );
}
