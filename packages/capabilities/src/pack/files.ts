import { z } from 'zod';
import { defineCapability, defineCommand, type Capability, type CommandDefinition } from '../contract.js';
import { CapabilityError } from '../errors.js';
import { definePlugin, type PluginContext } from '../plugin.js';
import { createEditorCapability } from './editor.js';
import { guardOf, withErrnoFailures, type FilesOptions } from './internal/filesConfig.js';
import type { PathGuard } from './internal/fsGuard.js';
import { DEFAULT_READ_BYTES, MAX_LIST_DEPTH, MAX_LIST_ENTRIES, MAX_READ_BYTES, MAX_WRITE_BYTES } from './internal/filesLimits.js';

export { DEFAULT_READ_BYTES, MAX_READ_BYTES, MAX_WRITE_BYTES, MAX_LIST_ENTRIES, MAX_LIST_DEPTH };
export type { FilesOptions } from './internal/filesConfig.js';

/** zod schema of the files plugin's settings (`pluginSettings.files`). */
export const filesSettingsSchema = z.object({
  roots: z.array(z.string().min(1).max(4096)).max(64).optional().describe("Directories the files and editor commands may reach; default the user's home."),
});

/** Most matches one `fs.search` returns. */
export const MAX_SEARCH_MATCHES = 5000;
/** Default deadline of one `fs.search`; the worker running it is stopped then. */
export const DEFAULT_SEARCH_TIMEOUT_MS = 30_000;

const path = z.string().min(1).max(4096);
const pathArg = path.describe('Absolute, `~/…`, or relative to the first files root.');

const readInput = z.strictObject({
  path: pathArg,
  startLine: z.number().int().min(1).optional().describe('First line to return (1-based); text files only.'),
  endLine: z.number().int().min(1).optional().describe('Last line to return (inclusive); default the last line.'),
  maxBytes: z.number().int().min(1).max(MAX_READ_BYTES).default(DEFAULT_READ_BYTES).describe('Most bytes returned; a longer read is cut there (an exact prefix, on a character boundary) and marked `truncated`.'),
  encoding: z.enum(['auto', 'text', 'base64']).default('auto').describe('`auto`: text when the file is UTF-8 without NUL bytes, else base64 as an embedded resource.'),
});

const writeInput = z
  .strictObject({
    path: pathArg,
    content: z.string().optional().describe('The new text (UTF-8).'),
    base64: z.string().optional().describe('The new content as base64, instead of `content`.'),
    onExists: z.enum(['replace', 'fail']).default('replace').describe('What to do when the file exists.'),
    createParents: z.boolean().default(false).describe('Create missing parent directories.'),
  })
  .refine((value) => (value.content === undefined) !== (value.base64 === undefined), { message: 'Give exactly one of `content` and `base64`.' });

const listInput = z.strictObject({
  path: pathArg.default('.'),
  depth: z.number().int().min(1).max(MAX_LIST_DEPTH).default(1).describe('Levels to descend (1: the directory itself).'),
  glob: z.string().min(1).max(1000).optional().describe('Only entries whose relative path matches (`*.ts`, `src/**/*.md`, `{a,b}`).'),
  hidden: z.boolean().default(false).describe('Include names starting with a dot.'),
  limit: z.number().int().min(1).max(MAX_LIST_ENTRIES).default(1000).describe('Most entries returned; more are marked `truncated`.'),
});

const searchInput = z.strictObject({
  pattern: z.string().min(1).max(1000).describe('A JavaScript regular expression (or text, with `literal`), matched line by line.'),
  path: pathArg.default('.'),
  literal: z.boolean().default(false).describe('Match `pattern` as plain text.'),
  ignoreCase: z.boolean().default(false),
  include: z.array(z.string().min(1).max(1000)).max(32).default([]).describe('Only files whose relative path matches one of these globs.'),
  exclude: z.array(z.string().min(1).max(1000)).max(32).default([]).describe('Skip files and directories matching any of these globs.'),
  hidden: z.boolean().default(false).describe('Search names starting with a dot too (`.git` never).'),
  gitignore: z.boolean().default(true).describe('Skip what `.gitignore` files in the tree ignore.'),
  maxMatches: z.number().int().min(1).max(MAX_SEARCH_MATCHES).default(200),
  contextLines: z.number().int().min(0).max(10).default(0).describe('Lines shown before and after each match.'),
  timeoutMs: z.number().int().min(100).max(120_000).default(DEFAULT_SEARCH_TIMEOUT_MS).describe('The search stops (failure `timeout`) after this long.'),
});

type Guarded<I> = (guard: PathGuard, args: I, signal: AbortSignal) => Promise<import('../content.js').CommandSuccess>;

/** One files command: its guard made per call, its work loaded on first use. */
function fileCommand<S extends z.ZodType>(
  options: FilesOptions,
  definition: Omit<CommandDefinition<z.output<S>>, 'execute' | 'input' | 'consent' | 'approvalDiff'> & { input: S; run: Guarded<z.output<S>>; diff?: (guard: PathGuard, args: z.output<S>) => Promise<string | undefined> },
): CommandDefinition<z.output<S>> {
  const { run, diff, ...rest } = definition;
  return defineCommand({
    ...rest,
    consent: 'files',
    ...(diff === undefined ? {} : { approvalDiff: async (args: z.output<S>) => diff(await guardOf(options), args) }),
    execute: async (args, ctx) => withErrnoFailures(rest.name, run(await guardOf(options), args, ctx.signal)),
  });
}


/** The bytes `fs.write` puts in the file. */
function contentOf(args: { readonly content?: string | undefined; readonly base64?: string | undefined }): Buffer {
  return args.content !== undefined ? Buffer.from(args.content, 'utf8') : decodeBase64(args.base64 ?? '');
}

/** The diff a write makes (text over text), or a line saying what replaces what. */
async function writeDiff(guard: PathGuard, args: z.output<typeof writeInput>): Promise<string> {
  const { readEditorFile, editDiff } = await import('./internal/editorOps.js');
  const data = contentOf(args);
  const target = await guard.resolve(args.path);
  const { looksLikeText } = await import('./internal/fsRead.js');
  try {
    const file = await readEditorFile(guard, target.path);
    if (looksLikeText(data)) return editDiff(file, data.toString('utf8'));
  } catch (error) {
    if (!(error instanceof CapabilityError) || error.code === 'denied' || error.code === 'unsupported') throw error;
  }
  return `(${target.stats ? `${target.stats.size} bytes replaced by` : 'a new file of'} ${data.length} bytes; no line diff of binary or large content)\n`;
}

/**
 * The files commands: `fs.read`, `fs.write`, `fs.list`, `fs.stat`, `fs.search`, `fs.move`,
 * `fs.delete`, `fs.mkdir`, all in consent category `files`. Every path is resolved to its real
 * location before it is checked against the roots; see the pack README for the rules.
 */
export function createFilesCapability(options: FilesOptions = {}): Capability {
  const ops = () => import('./internal/fsOps.js');
  return defineCapability({
    category: 'files',
    commands: [
      fileCommand(options, {
        name: 'fs.read',
        description: 'Reads a file under the files roots: text (whole, or a line range), or a binary file as a base64 resource. Reads past `maxBytes` are cut there and marked `truncated`.',
        annotations: { title: 'Read a file', readOnly: true },
        input: readInput,
        run: async (guard, args, signal) => (await ops()).readPath(await guard.resolve(args.path, { exists: 'must' }), args, signal),
      }),
      fileCommand(options, {
        name: 'fs.write',
        description: 'Creates or replaces a file under the files roots, atomically (a temporary file renamed over it); a replaced file keeps its permission bits.',
        annotations: { title: 'Write a file', readOnly: false, destructive: true, idempotent: true },
        input: writeInput,
        diff: writeDiff,
        run: async (guard, args) => (await ops()).writePath(guard, await guard.resolve(args.path), { data: contentOf(args), onExists: args.onExists, createParents: args.createParents }),
      }),
      fileCommand(options, {
        name: 'fs.list',
        description: 'Lists a directory under the files roots, to a depth, optionally filtered by a glob; hidden names only when asked.',
        annotations: { title: 'List a directory', readOnly: true },
        input: listInput,
        run: async (guard, args, signal) => (await ops()).listPath(guard, await guard.resolve(args.path, { exists: 'must' }), args, signal),
      }),
      fileCommand(options, {
        name: 'fs.stat',
        description: 'Type, size, permission bits and times of a path under the files roots (`exists: false` when nothing is there).',
        annotations: { title: 'Describe a path', readOnly: true },
        input: z.strictObject({ path: pathArg }),
        run: async (guard, args) => (await ops()).statPath(await guard.resolve(args.path), args.path),
      }),
      fileCommand(options, {
        name: 'fs.search',
        description: 'Searches the text files of a directory tree under the files roots for a regular expression (or text): glob filters, `.gitignore` honoured, binary files skipped, matches bounded, with context lines.',
        annotations: { title: 'Search files', readOnly: true },
        input: searchInput,
        run: async (guard, args, signal) => (await import('./internal/fsSearchRun.js')).searchPath(guard, args, signal),
      }),
      fileCommand(options, {
        name: 'fs.move',
        description: 'Moves or renames a file or directory; both ends must be under the files roots.',
        annotations: { title: 'Move a file', readOnly: false, destructive: true },
        input: z.strictObject({ from: pathArg, to: pathArg, overwrite: z.boolean().default(false).describe('Replace a file at `to`.') }),
        run: async (guard, args) => {
          const from = await guard.resolve(args.from, { exists: 'must', removes: true });
          const to = await guard.resolve(args.to, { removes: true });
          return (await ops()).movePath(from, to, args.overwrite);
        },
      }),
      fileCommand(options, {
        name: 'fs.delete',
        description: 'Deletes a file, an empty directory, or with `recursive` a whole tree (symlinks inside are removed, never followed).',
        annotations: { title: 'Delete a file', readOnly: false, destructive: true },
        input: z.strictObject({ path: pathArg, recursive: z.boolean().default(false) }),
        run: async (guard, args) => (await ops()).deletePath(await guard.resolve(args.path, { exists: 'must', removes: true }), args.recursive),
      }),
      fileCommand(options, {
        name: 'fs.mkdir',
        description: 'Creates a directory under the files roots, with its missing parents unless `parents` is false.',
        annotations: { title: 'Make a directory', readOnly: false, idempotent: true },
        input: z.strictObject({ path: pathArg, parents: z.boolean().default(true) }),
        run: async (guard, args) => (await ops()).makeDirectory(await guard.resolve(args.path), args.parents),
      }),
    ],
  });
}

function decodeBase64(value: string): Buffer {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value)) throw new CapabilityError('invalid_arguments', '`base64` is not base64.');
  return Buffer.from(value, 'base64');
}

/**
 * The files options the files plugin's settings (`pluginSettings.files`) give: their roots, capnode's
 * config directory kept out. Settings that cannot be read grant nothing rather than the default, and
 * `warn` is told so. `fs.*` and `browser.upload` read their roots through it.
 */
export function filesOptionsFromSettings(settings: unknown, configDir: string, warn: (message: string) => void): FilesOptions {
  const parsed = filesSettingsSchema.safeParse(settings);
  if (!parsed.success) warn('files: `roots` in the plugin settings is not a list of paths; no path is reachable until it is fixed.');
  const roots = parsed.success ? parsed.data.roots : [];
  return { ...(roots === undefined ? {} : { roots }), configDir };
}

/** The files options a plugin context gives (see {@link filesOptionsFromSettings}). */
export function filesOptionsOf(context: PluginContext): FilesOptions {
  return filesOptionsFromSettings(context.settings, context.configDir, (message) => context.log('warning', message));
}

/** The files plugin of the pack: `fs.*` and `editor.*` (settings `pluginSettings.files.roots`). */
export const filesPlugin = definePlugin((context: PluginContext) => {
  const options = filesOptionsOf(context);
  return [createFilesCapability(options), createEditorCapability(options)];
});
