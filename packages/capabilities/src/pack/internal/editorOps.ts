import { createHash } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { CapabilityError } from '../../errors.js';
import { MAX_EDIT_FILE_BYTES, MAX_UNDO_BYTES, MAX_UNDO_FILES, MAX_UNDO_PER_FILE } from './editorLimits.js';
import { pathRefusal, type PathGuard, type ResolvedPath } from './fsGuard.js';
import { openCheckedForRead, readPrefix, writeFileAtomic } from './fsIo.js';
import { looksLikeText } from './fsRead.js';
import { unifiedDiff } from './lineDiff.js';


/** A file's text as the editor read it: absent (`undefined`) when no file is there. */
export interface EditorFile {
  readonly target: ResolvedPath;
  readonly text: string | undefined;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Reads a text file for editing: bounded, text only. */
export async function readEditorFile(guard: PathGuard, path: string, exists?: 'must' | 'never'): Promise<EditorFile> {
  const target = await guard.resolve(path, exists === undefined ? {} : { exists });
  if (!target.stats) return { target, text: undefined };
  if (target.stats.isDirectory()) throw pathRefusal('invalid_arguments', 'is_directory', 'The path is a directory.');
  if (target.stats.size > MAX_EDIT_FILE_BYTES) {
    throw new CapabilityError('payload_too_large', `The file is ${target.stats.size} bytes, over the editor's ${MAX_EDIT_FILE_BYTES}-byte limit (read it in ranges with fs.read).`, { data: { reason: 'too_large', limit: MAX_EDIT_FILE_BYTES } });
  }
  const { handle } = await openCheckedForRead(target.path, target.stats);
  try {
    const data = await readPrefix(handle, MAX_EDIT_FILE_BYTES + 1);
    if (data.length > MAX_EDIT_FILE_BYTES) throw new CapabilityError('payload_too_large', `The file is over the editor's ${MAX_EDIT_FILE_BYTES}-byte limit.`, { data: { reason: 'too_large' } });
    if (!looksLikeText(data)) throw pathRefusal('invalid_arguments', 'binary_file', 'The file is binary; the editor edits text files only.');
    return { target, text: data.toString('utf8') };
  } finally {
    await handle.close();
  }
}

/** Where each occurrence of `needle` starts in `text` (1-based line numbers). */
export function occurrenceLines(text: string, needle: string): number[] {
  const lines: number[] = [];
  for (let at = text.indexOf(needle); at >= 0 && lines.length < 100; at = text.indexOf(needle, at + Math.max(1, needle.length))) {
    lines.push(text.slice(0, at).split('\n').length);
  }
  return lines;
}

/** `text` with `oldStr` replaced, refused unless `oldStr` occurs exactly once (the error names how many times it did). */
export function replaceOnce(text: string, oldStr: string, newStr: string, path: string): { text: string; line: number } {
  if (oldStr.length === 0) throw new CapabilityError('invalid_arguments', '`oldStr` is empty; give the exact text to replace.', { data: { reason: 'empty_old_str' } });
  const lines = occurrenceLines(text, oldStr);
  if (lines.length === 0) {
    throw new CapabilityError('invalid_arguments', `No replacement was made: \`oldStr\` was found 0 times in ${path} (it must appear verbatim, whitespace included).`, {
      data: { reason: 'no_match', matches: 0 },
    });
  }
  if (lines.length > 1) {
    const count = lines.length >= 100 ? '100 or more' : String(lines.length);
    throw new CapabilityError('invalid_arguments', `No replacement was made: \`oldStr\` was found ${count} times in ${path} (lines ${lines.slice(0, 20).join(', ')}); include more context so it matches exactly once.`, {
      data: { reason: 'multiple_matches', matches: lines.length, lines: lines.slice(0, 20) },
    });
  }
  const at = text.indexOf(oldStr);
  return { text: text.slice(0, at) + newStr + text.slice(at + oldStr.length), line: lines[0]! };
}

/** `text` with `insert` put after line `after` (0: at the top). */
export function insertAfter(text: string, after: number, insert: string): string {
  const lines = text.split('\n');
  const count = text.endsWith('\n') ? lines.length - 1 : lines.length;
  if (after > count) {
    throw new CapabilityError('invalid_arguments', `\`insertLine\` is ${after}, but the file has ${count} lines (give 0 to ${count}).`, { data: { reason: 'line_out_of_range', lines: count } });
  }
  const block = insert.endsWith('\n') || insert === '' ? insert : `${insert}\n`;
  if (after === 0) return block + text;
  let offset = 0;
  for (let line = 0; line < after; line++) offset = text.indexOf('\n', offset) + 1 || text.length;
  const head = text.slice(0, offset);
  return (head.endsWith('\n') || head === '' ? head : `${head}\n`) + block + text.slice(offset);
}

/** Lines `from`..`to` of `text`, numbered as `cat -n` does. */
export function numberLines(text: string, from = 1, to?: number): string {
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  const last = Math.min(to ?? lines.length, lines.length);
  const out: string[] = [];
  for (let line = Math.max(1, from); line <= last; line++) out.push(`${String(line).padStart(6)}\t${lines[line - 1]}`);
  return out.join('\n');
}

/** The numbered lines around an edit that starts at `line` and spans `span` lines of the new text. */
export function snippetAround(text: string, line: number, span: number): string {
  return numberLines(text, Math.max(1, line - 4), line + span + 3);
}

/** The diff an edit makes, for the approval prompt. */
export function editDiff(file: EditorFile, after: string | undefined): string {
  return unifiedDiff(file.text ?? '', after ?? '', { path: file.target.path.replace(/^\//, '') }) || '(no change)\n';
}

interface UndoEntry {
  /** The file's text before the edit; undefined: it did not exist. */
  readonly before: string | undefined;
  /** Hash of the text the edit left: undo refuses when the file changed since. */
  readonly afterHash: string;
}

/** Per-file undo history, bounded by entries per file, files, and bytes. */
export interface UndoHistory {
  record(path: string, before: string | undefined, after: string): void;
  peek(path: string): UndoEntry | undefined;
  pop(path: string): UndoEntry | undefined;
}

export function createUndoHistory(): UndoHistory {
  const files = new Map<string, UndoEntry[]>();
  let bytes = 0;
  const sizeOf = (entry: UndoEntry) => (entry.before?.length ?? 0) * 2 + 128;
  const trim = () => {
    while ((bytes > MAX_UNDO_BYTES || files.size > MAX_UNDO_FILES) && files.size > 0) {
      const [oldest, entries] = files.entries().next().value as [string, UndoEntry[]];
      const dropped = entries.shift();
      if (dropped) bytes -= sizeOf(dropped);
      if (entries.length === 0 || files.size > MAX_UNDO_FILES) {
        for (const entry of entries) bytes -= sizeOf(entry);
        files.delete(oldest);
      }
    }
  };
  return {
    record(path, before, after) {
      const entries = files.get(path) ?? [];
      files.delete(path);
      const entry = { before, afterHash: sha256(after) };
      entries.push(entry);
      bytes += sizeOf(entry);
      while (entries.length > MAX_UNDO_PER_FILE) bytes -= sizeOf(entries.shift()!);
      files.set(path, entries);
      trim();
    },
    peek: (path) => files.get(path)?.at(-1),
    pop(path) {
      const entries = files.get(path);
      const entry = entries?.pop();
      if (entry) bytes -= sizeOf(entry);
      if (entries && entries.length === 0) files.delete(path);
      return entry;
    },
  };
}

/** Writes the edited text (atomically, keeping the mode), or removes a file an undone create made. */
export async function commitEdit(file: EditorFile, after: string | undefined): Promise<void> {
  if (after === undefined) {
    await unlink(file.target.path);
    return;
  }
  await writeFileAtomic(file.target.path, Buffer.from(after, 'utf8'), file.target.stats ? { replaces: file.target.stats } : {});
}
