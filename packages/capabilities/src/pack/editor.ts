import { dirname } from 'node:path';
import { z } from 'zod';
import type { CommandSuccess } from '../content.js';
import { defineCapability, defineCommand, type Capability, type CommandDefinition } from '../contract.js';
import { CapabilityError } from '../errors.js';
import type { EditorFile, UndoHistory } from './internal/editorOps.js';
import type { PathGuard } from './internal/fsGuard.js';
import { guardOf, withErrnoFailures, type FilesOptions } from './internal/filesConfig.js';

const pathArg = z.string().min(1).max(4096).describe('Absolute, `~/…`, or relative to the first files root.');
/** Longest text one editor call takes (`text`, `oldStr`, `newStr`), in characters. */
export const MAX_EDITOR_TEXT_CHARS = 2 * 1024 * 1024;
const textArg = z.string().max(MAX_EDITOR_TEXT_CHARS);

const viewInput = z.strictObject({
  path: pathArg,
  startLine: z.number().int().min(1).optional().describe('First line shown (1-based).'),
  endLine: z.number().int().min(-1).optional().describe('Last line shown (inclusive); -1 or absent: to the end.'),
});
const createInput = z.strictObject({ path: pathArg, text: textArg.describe('The whole content of the new file.') });
const replaceInput = z.strictObject({
  path: pathArg,
  oldStr: textArg.describe('Text that must occur exactly once in the file, whitespace included.'),
  newStr: textArg.default('').describe('Its replacement (empty deletes it).'),
});
const insertInput = z.strictObject({
  path: pathArg,
  insertLine: z.number().int().min(0).describe('Insert after this line (0: at the top).'),
  text: textArg.describe('The lines to insert.'),
});
const undoInput = z.strictObject({ path: pathArg });

/** What an edit will do: the file as read, its text after, and where the change starts (for the snippet). */
interface EditPlan {
  readonly file: EditorFile;
  /** `undefined`: the file is removed (undoing a create). */
  readonly after: string | undefined;
  readonly line: number;
  readonly span: number;
  readonly kind: 'create' | 'edit' | 'undo';
}

type Planner<I> = (guard: PathGuard, args: I) => Promise<EditPlan>;

const ops = () => import('./internal/editorOps.js');

/**
 * One editing command: planned from its arguments (also for the approval prompt's diff), then
 * committed. The text the prompt's diff was made from is remembered per call: when the file changed
 * between the prompt and the write, nothing is written.
 */
function editCommand<S extends z.ZodType>(
  options: FilesOptions,
  historyOf: () => Promise<UndoHistory>,
  definition: Omit<CommandDefinition<z.output<S>>, 'execute' | 'input' | 'consent' | 'approvalDiff'> & { input: S; plan: Planner<z.output<S>> },
): CommandDefinition<z.output<S>> {
  const { plan, ...rest } = definition;
  const shown = new WeakMap<object, string>();
  return defineCommand({
    ...rest,
    consent: 'files',
    async approvalDiff(args) {
      const planned = await plan(await guardOf(options), args);
      const { editDiff, sha256 } = await ops();
      shown.set(args as object, sha256(planned.file.text ?? '\0absent'));
      return editDiff(planned.file, planned.after);
    },
    execute: (args) => withErrnoFailures(rest.name, commit(args)),
  });

  async function commit(args: z.output<S>): Promise<CommandSuccess> {
    const planned = await plan(await guardOf(options), args);
    const { commitEdit, sha256, snippetAround } = await ops();
    const approved = shown.get(args as object);
    if (approved !== undefined && approved !== sha256(planned.file.text ?? '\0absent')) {
      throw new CapabilityError('failed', 'The file changed after the edit was put to you for approval; nothing was written. Try again.', { data: { reason: 'changed' } });
    }
    await commitEdit(planned.file, planned.after);
    const history = await historyOf();
    if (planned.kind === 'undo') history.pop(planned.file.target.path);
    else history.record(planned.file.target.path, planned.file.text, planned.after ?? '');
    return editResult(planned, planned.after === undefined ? undefined : snippetAround(planned.after, planned.line, planned.span));
  }
}

function editResult(planned: EditPlan, snippet: string | undefined): CommandSuccess {
  const path = planned.file.target.path;
  const what = planned.kind === 'create' ? `Created ${path}.` : planned.kind === 'undo' ? (planned.after === undefined ? `Undid the creation of ${path}: the file was removed.` : `Undid the last edit of ${path}.`) : `Edited ${path}.`;
  const text = snippet === undefined ? what : `${what} The lines around the change (cat -n):\n${snippet}`;
  return { ok: true, content: [{ type: 'text', text }], structured: { path, action: planned.kind, ...(snippet === undefined ? { removed: true } : { snippet }) } };
}

async function view(guard: PathGuard, args: z.output<typeof viewInput>): Promise<CommandSuccess> {
  const target = await guard.resolve(args.path, { exists: 'must' });
  if (target.stats?.isDirectory()) {
    const { listPath } = await import('./internal/fsOps.js');
    const listed = await listPath(guard, target, { depth: 2, hidden: false, limit: 1000 }, new AbortController().signal);
    const entries = (listed.structured?.entries as { path: string; type: string }[]).map((entry) => `${entry.path}${entry.type === 'directory' ? '/' : ''}`);
    return { ok: true, content: [{ type: 'text', text: `Files and directories in ${target.path}, 2 levels deep (hidden ones left out):\n${entries.join('\n')}` }], structured: { path: target.path, entries } };
  }
  const { readEditorFile, numberLines } = await ops();
  const file = await readEditorFile(guard, args.path, 'must');
  const text = file.text ?? '';
  const total = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  const start = args.startLine ?? 1;
  const end = args.endLine === undefined || args.endLine === -1 ? total : args.endLine;
  if (start > Math.max(total, 1) || end < start) {
    throw new CapabilityError('invalid_arguments', `The range ${start}–${end} is not within the file's ${total} lines.`, { data: { reason: 'line_out_of_range', lines: total } });
  }
  const numbered = numberLines(text, start, end);
  return { ok: true, content: [{ type: 'text', text: numbered }], structured: { path: file.target.path, startLine: start, endLine: Math.min(end, total), totalLines: total, text: numbered } };
}

/**
 * The editor commands, with the semantics agents know from the common text-editor tool:
 * `editor.view` (numbered lines, a range; a directory's entries), `editor.create`,
 * `editor.str_replace` (exactly one match, else an error naming how many), `editor.insert` (after a
 * line), `editor.undo` (per file, bounded history). Same roots and rules as the files commands,
 * consent category `files`; every write's approval prompt shows its diff.
 */
export function createEditorCapability(options: FilesOptions = {}): Capability {
  let history: UndoHistory | undefined;
  const historyOf = async () => (history ??= (await ops()).createUndoHistory());
  return defineCapability({
    category: 'files',
    commands: [
      defineCommand({
        name: 'editor.view',
        description: "Shows a text file's lines numbered (`cat -n`), or a range of them; for a directory, its entries two levels deep.",
        annotations: { title: 'View a file', readOnly: true },
        consent: 'files',
        input: viewInput,
        execute: async (args) => withErrnoFailures('editor.view', view(await guardOf(options), args)),
      }),
      editCommand(options, historyOf, {
        name: 'editor.create',
        description: 'Creates a new text file with the given content (refused when the path exists: edit it with editor.str_replace or editor.insert).',
        annotations: { title: 'Create a file', readOnly: false, destructive: false },
        input: createInput,
        plan: async (guard, args) => {
          const { readEditorFile } = await ops();
          const file = await readEditorFile(guard, args.path, 'never');
          const parent = await guard.resolve(dirname(file.target.path));
          if (!parent.stats?.isDirectory()) throw new CapabilityError('invalid_arguments', 'The parent directory does not exist (make it with fs.mkdir).', { data: { reason: 'missing_parent' } });
          return { file, after: args.text, line: 1, span: args.text.split('\n').length, kind: 'create' };
        },
      }),
      editCommand(options, historyOf, {
        name: 'editor.str_replace',
        description: 'Replaces text that occurs exactly once in a file; with 0 or several matches nothing changes and the error says how many there were.',
        annotations: { title: 'Replace text in a file', readOnly: false, destructive: true },
        input: replaceInput,
        plan: async (guard, args) => {
          const { readEditorFile, replaceOnce } = await ops();
          const file = await readEditorFile(guard, args.path, 'must');
          const replaced = replaceOnce(file.text ?? '', args.oldStr, args.newStr, file.target.path);
          return { file, after: replaced.text, line: replaced.line, span: args.newStr.split('\n').length, kind: 'edit' };
        },
      }),
      editCommand(options, historyOf, {
        name: 'editor.insert',
        description: 'Inserts lines after a given line of a text file (0: at the top).',
        annotations: { title: 'Insert lines into a file', readOnly: false, destructive: true },
        input: insertInput,
        plan: async (guard, args) => {
          const { readEditorFile, insertAfter } = await ops();
          const file = await readEditorFile(guard, args.path, 'must');
          return { file, after: insertAfter(file.text ?? '', args.insertLine, args.text), line: args.insertLine + 1, span: args.text.split('\n').length, kind: 'edit' };
        },
      }),
      editCommand(options, historyOf, {
        name: 'editor.undo',
        description: 'Undoes the last editor change to a file (create, str_replace or insert), up to 10 per file while the host runs; refused when the file changed since.',
        annotations: { title: 'Undo an edit', readOnly: false, destructive: true },
        input: undoInput,
        plan: async (guard, args) => {
          const { readEditorFile, sha256 } = await ops();
          const file = await readEditorFile(guard, args.path);
          const entry = (await historyOf()).peek(file.target.path);
          if (!entry) throw new CapabilityError('invalid_arguments', `There is no edit of ${file.target.path} to undo.`, { data: { reason: 'no_history' } });
          if (file.text === undefined || sha256(file.text) !== entry.afterHash) {
            throw new CapabilityError('failed', `${file.target.path} changed since its last edit here; undo would lose that change, so nothing was done.`, { data: { reason: 'changed' } });
          }
          return { file, after: entry.before, line: 1, span: 0, kind: 'undo' };
        },
      }),
    ],
  });
}

export { MAX_UNDO_PER_FILE, MAX_EDIT_FILE_BYTES } from './internal/editorLimits.js';
