import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatApprovalSummary } from '@capnode/capabilities';
import { MAX_UNDO_PER_FILE, MAX_WRITE_BYTES } from '@capnode/capabilities/pack';
import { describe, expect, it } from 'vitest';
import { startTestHost, tempDir, type TestHost } from '../support/testHost.js';

interface CallResult {
  readonly isError: boolean;
  readonly text: string;
  readonly structured: Record<string, unknown> | undefined;
  readonly code: string | undefined;
  readonly content: { type: string; text?: string; resource?: { uri: string; mimeType?: string; blob?: string } }[];
}

/** A tool call through the host's real SDK v2 client over HTTP, with its failure code from `_meta`. */
async function call(host: TestHost, name: string, args: Record<string, unknown>): Promise<CallResult> {
  const result = (await host.client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content?: CallResult['content'];
    structuredContent?: Record<string, unknown>;
    _meta?: Record<string, { code?: string } | undefined>;
  };
  const content = result.content ?? [];
  return {
    isError: result.isError === true,
    text: content.map((part) => part.text ?? '').join('\n'),
    structured: result.structuredContent,
    code: result._meta?.['capnode/failure']?.code,
    content,
  };
}

/** A host whose files plugin has `roots`, with files consent `mode`. */
function filesHost(roots: readonly string[], mode: 'off' | 'ask' | 'allow' = 'allow'): Promise<TestHost> {
  return startTestHost({ settings: { consent: { files: mode }, pluginSettings: { files: { roots } } } });
}

describe('files over MCP HTTP (real host, SDK v2 client)', () => {
  it('writes, reads, stats, lists, moves, deletes and makes directories inside a root', async () => {
    using dir = tempDir('capnode-files-');
    await using host = await filesHost([dir.path]);
    expect(await call(host, 'fs.mkdir', { path: 'a/b' })).toMatchObject({ isError: false, structured: { created: true, path: join(dir.path, 'a', 'b') } });
    expect(await call(host, 'fs.write', { path: 'a/b/note.txt', content: 'one\ntwo\nthree\n' })).toMatchObject({ isError: false, structured: { created: true, bytes: 14 } });
    expect(readFileSync(join(dir.path, 'a/b/note.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(await call(host, 'fs.read', { path: join(dir.path, 'a/b/note.txt') })).toMatchObject({ isError: false, text: 'one\ntwo\nthree\n', structured: { encoding: 'utf8', truncated: false } });
    expect(await call(host, 'fs.read', { path: 'a/b/note.txt', startLine: 2, endLine: 2 })).toMatchObject({ text: 'two\n', structured: { startLine: 2, endLine: 2 } });
    expect(await call(host, 'fs.stat', { path: 'a/b/note.txt' })).toMatchObject({ structured: { exists: true, type: 'file', size: 14 } });
    expect(await call(host, 'fs.stat', { path: 'nothing' })).toMatchObject({ isError: false, structured: { exists: false } });
    writeFileSync(join(dir.path, '.dotfile'), 'x');
    const listed = await call(host, 'fs.list', { path: '.', depth: 3 });
    expect((listed.structured!.entries as { path: string }[]).map((entry) => entry.path)).toEqual(['a', 'a/b', 'a/b/note.txt']);
    const hidden = await call(host, 'fs.list', { hidden: true });
    expect((hidden.structured!.entries as { path: string }[]).map((entry) => entry.path)).toEqual(['.dotfile', 'a']);
    const globbed = await call(host, 'fs.list', { depth: 5, glob: '*.txt' });
    expect((globbed.structured!.entries as { path: string }[]).map((entry) => entry.path)).toEqual(['a/b/note.txt']);
    const limited = await call(host, 'fs.list', { depth: 5, limit: 1 });
    expect(limited.structured).toMatchObject({ count: 1, truncated: true });
    expect(await call(host, 'fs.move', { from: 'a/b/note.txt', to: 'a/moved.txt' })).toMatchObject({ isError: false });
    expect(existsSync(join(dir.path, 'a/moved.txt'))).toBe(true);
    expect(await call(host, 'fs.delete', { path: 'a' })).toMatchObject({ isError: true, code: 'invalid_arguments', text: expect.stringMatching(/not empty/) });
    expect(await call(host, 'fs.delete', { path: 'a', recursive: true })).toMatchObject({ isError: false, structured: { deleted: true } });
    expect(existsSync(join(dir.path, 'a'))).toBe(false);
  });

  it('replaces a file atomically and keeps its mode; onExists: fail refuses; oversized content is payload_too_large', async () => {
    using dir = tempDir('capnode-files-');
    const file = join(dir.path, 'script.sh');
    writeFileSync(file, 'old');
    chmodSync(file, 0o751);
    await using host = await filesHost([dir.path]);
    expect(await call(host, 'fs.write', { path: file, content: 'new' })).toMatchObject({ isError: false, structured: { created: false, mode: '0751' } });
    expect(readFileSync(file, 'utf8')).toBe('new');
    expect(statSync(file).mode & 0o7777).toBe(0o751);
    expect(readdirSync(dir.path)).toEqual(['script.sh']);
    expect(await call(host, 'fs.write', { path: file, content: 'x', onExists: 'fail' })).toMatchObject({ isError: true, code: 'invalid_arguments' });
    expect(await call(host, 'fs.write', { path: 'big.txt', content: 'x'.repeat(MAX_WRITE_BYTES + 1) })).toMatchObject({ isError: true, code: 'payload_too_large' });
    expect(existsSync(join(dir.path, 'big.txt'))).toBe(false);
    expect(await call(host, 'fs.write', { path: 'deep/er/x.txt', content: 'x' })).toMatchObject({ isError: true, code: 'invalid_arguments', text: expect.stringMatching(/createParents/) });
    expect(await call(host, 'fs.write', { path: 'deep/er/x.txt', content: 'x', createParents: true })).toMatchObject({ isError: false });
    // A symlink inside the root is written through: the link stays, its target changes.
    symlinkSync(file, join(dir.path, 'link.sh'));
    expect(await call(host, 'fs.write', { path: 'link.sh', content: 'via link' })).toMatchObject({ isError: false, structured: { path: file } });
    expect(readFileSync(file, 'utf8')).toBe('via link');
  });

  it('cuts a read at maxBytes to an exact prefix with truncated: true (text on a character boundary, binary as a base64 resource)', async () => {
    using dir = tempDir('capnode-files-');
    const text = `${'héllo wörld '.repeat(1000)}\n`;
    writeFileSync(join(dir.path, 'big.txt'), text);
    const binary = Buffer.from(Array.from({ length: 3000 }, (_, index) => index % 256));
    writeFileSync(join(dir.path, 'blob.bin'), binary);
    await using host = await filesHost([dir.path]);
    const cut = await call(host, 'fs.read', { path: 'big.txt', maxBytes: 1001 });
    expect(cut.structured).toMatchObject({ truncated: true, size: Buffer.byteLength(text) });
    expect(text.startsWith(cut.text)).toBe(true);
    expect(Buffer.byteLength(cut.text)).toBeGreaterThan(995);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(1001);
    const whole = await call(host, 'fs.read', { path: 'big.txt', maxBytes: Buffer.byteLength(text) });
    expect(whole).toMatchObject({ text, structured: { truncated: false } });
    const blob = await call(host, 'fs.read', { path: 'blob.bin', maxBytes: 1000 });
    expect(blob.structured).toMatchObject({ encoding: 'base64', truncated: true, bytes: 1000, size: 3000 });
    const resource = blob.content.find((part) => part.type === 'resource')!.resource!;
    expect(resource.uri).toBe(`file://${join(dir.path, 'blob.bin')}`);
    expect(Buffer.from(resource.blob!, 'base64').equals(binary.subarray(0, 1000))).toBe(true);
    expect(await call(host, 'fs.read', { path: 'blob.bin', startLine: 1 })).toMatchObject({ isError: true, code: 'invalid_arguments' });
    expect(await call(host, 'fs.read', { path: 'big.txt', maxBytes: 0 })).toMatchObject({ isError: true, code: 'invalid_arguments' });
  });

  it('follows a symlink that stays inside a root and refuses one that leaves it (denied), for reads, writes, moves and deletes', async () => {
    using dir = tempDir('capnode-files-');
    using other = tempDir('capnode-files-outside-');
    writeFileSync(join(other.path, 'secret.txt'), 'secret');
    mkdirSync(join(dir.path, 'in'));
    writeFileSync(join(dir.path, 'in', 'ok.txt'), 'ok');
    symlinkSync(join(dir.path, 'in'), join(dir.path, 'inside'));
    symlinkSync(other.path, join(dir.path, 'escape'));
    await using host = await filesHost([dir.path]);
    expect(await call(host, 'fs.read', { path: 'inside/ok.txt' })).toMatchObject({ isError: false, text: 'ok' });
    expect(await call(host, 'fs.read', { path: 'escape/secret.txt' })).toMatchObject({ isError: true, code: 'denied', text: expect.stringMatching(/outside the files roots/) });
    expect(await call(host, 'fs.read', { path: '../' + other.path.split('/').pop() + '/secret.txt' })).toMatchObject({ isError: true, code: 'denied' });
    expect(await call(host, 'fs.write', { path: 'escape/new.txt', content: 'x' })).toMatchObject({ isError: true, code: 'denied' });
    expect(existsSync(join(other.path, 'new.txt'))).toBe(false);
    expect(await call(host, 'fs.move', { from: 'in/ok.txt', to: 'escape/ok.txt' })).toMatchObject({ isError: true, code: 'denied' });
    expect(await call(host, 'fs.move', { from: 'escape/secret.txt', to: 'in/stolen.txt' })).toMatchObject({ isError: true, code: 'denied' });
    expect(await call(host, 'fs.delete', { path: 'escape/secret.txt' })).toMatchObject({ isError: true, code: 'denied' });
    expect(await call(host, 'fs.delete', { path: dir.path, recursive: true })).toMatchObject({ isError: true, code: 'denied' });
    expect(await call(host, 'fs.list', { path: other.path })).toMatchObject({ isError: true, code: 'denied' });
    expect(await call(host, 'fs.search', { pattern: 'secret', path: 'escape' })).toMatchObject({ isError: true, code: 'denied' });
    expect(readFileSync(join(other.path, 'secret.txt'), 'utf8')).toBe('secret');
    expect(existsSync(join(dir.path, 'in', 'ok.txt'))).toBe(true);
  });

  it("never reaches capnode's config directory, even when a root holds it", async () => {
    // `/` as the root holds the host's own config directory: its tokens and settings stay out of reach.
    await using scoped = await startTestHost({ settings: { consent: { files: 'allow' }, pluginSettings: { files: { roots: ['/'] } } } });
    for (const path of [join(scoped.home, 'mcp-token'), join(scoped.home, 'settings.json'), scoped.home]) {
      expect(await call(scoped, 'fs.read', { path })).toMatchObject({ isError: true, code: 'denied', text: expect.stringMatching(/config directory/) });
    }
    expect(await call(scoped, 'fs.write', { path: join(scoped.home, 'settings.json'), content: '{}' })).toMatchObject({ isError: true, code: 'denied' });
    expect(await call(scoped, 'fs.delete', { path: scoped.home, recursive: true })).toMatchObject({ isError: true, code: 'denied' });
    expect(await call(scoped, 'fs.move', { from: join(scoped.home, 'mcp-token'), to: join(scoped.home, '..', 'stolen') })).toMatchObject({ isError: true, code: 'denied' });
    const listed = await call(scoped, 'fs.list', { path: join(scoped.home, '..'), hidden: true, limit: 10_000 });
    expect(JSON.stringify(listed.structured)).not.toContain(scoped.home.split('/').pop());
    expect(readFileSync(join(scoped.home, 'settings.json'), 'utf8')).toContain('files');
  });

  it('refuses FIFOs, sockets and device files (unsupported) without blocking', async () => {
    using dir = tempDir('capnode-files-');
    execFileSync('mkfifo', [join(dir.path, 'pipe')]);
    await using host = await filesHost([dir.path, '/dev']);
    expect(await call(host, 'fs.read', { path: 'pipe' })).toMatchObject({ isError: true, code: 'unsupported', text: expect.stringMatching(/fifo/) });
    expect(await call(host, 'fs.write', { path: 'pipe', content: 'x' })).toMatchObject({ isError: true, code: 'unsupported' });
    expect(await call(host, 'fs.read', { path: '/dev/zero' })).toMatchObject({ isError: true, code: 'unsupported', text: expect.stringMatching(/device/) });
    expect(await call(host, 'fs.stat', { path: '/dev/null' })).toMatchObject({ isError: true, code: 'unsupported' });
  });

  it('searches a tree: regex, globs, .gitignore, context; a catastrophic pattern times out and the host keeps answering', async () => {
    using dir = tempDir('capnode-files-');
    mkdirSync(join(dir.path, 'src'));
    mkdirSync(join(dir.path, 'dist'));
    writeFileSync(join(dir.path, '.gitignore'), 'dist/\n');
    writeFileSync(join(dir.path, 'src', 'a.ts'), 'export const answer = 42;\n// TODO: more\n');
    writeFileSync(join(dir.path, 'dist', 'a.js'), 'export const answer = 42;\n');
    writeFileSync(join(dir.path, 'evil.txt'), `${'a'.repeat(4000)}!\n`);
    await using host = await filesHost([dir.path]);
    const found = await call(host, 'fs.search', { pattern: 'answer\\s*=\\s*\\d+', contextLines: 1 });
    expect(found.structured).toMatchObject({ count: 1, truncated: false, matches: [{ path: join(dir.path, 'src', 'a.ts'), line: 1, after: ['// TODO: more'] }] });
    expect((await call(host, 'fs.search', { pattern: 'answer', gitignore: false })).structured).toMatchObject({ count: 2 });
    expect((await call(host, 'fs.search', { pattern: 'answer', include: ['*.js'], gitignore: false })).structured).toMatchObject({ count: 1 });
    expect(await call(host, 'fs.search', { pattern: '(' })).toMatchObject({ isError: true, code: 'invalid_arguments' });
    expect(await call(host, 'fs.search', { pattern: 'x', include: ['{a,b}'.repeat(10)] })).toMatchObject({ isError: true, code: 'invalid_arguments' });
    const slow = call(host, 'fs.search', { pattern: '^(a+)+$', timeoutMs: 1000 });
    expect(await call(host, 'fs.stat', { path: 'src' })).toMatchObject({ isError: false });
    expect(await slow).toMatchObject({ isError: true, code: 'timeout' });
  });

  it('consent: off refuses (consent_required), ask puts the exact action to the broker, allow runs', async () => {
    using dir = tempDir('capnode-files-');
    writeFileSync(join(dir.path, 'f.txt'), 'content');
    {
      await using host = await filesHost([dir.path], 'off');
      expect(await call(host, 'fs.read', { path: 'f.txt' })).toMatchObject({ isError: true, code: 'consent_required', text: expect.stringMatching(/capnode consent set files/) });
      expect(await call(host, 'fs.delete', { path: 'f.txt' })).toMatchObject({ isError: true, code: 'consent_required' });
      expect(existsSync(join(dir.path, 'f.txt'))).toBe(true);
    }
    {
      await using host = await filesHost([dir.path], 'ask');
      host.answerWith('deny');
      expect(await call(host, 'fs.delete', { path: 'f.txt' })).toMatchObject({ isError: true, code: 'denied' });
      expect(host.asked[0]).toMatchObject({ command: 'fs.delete', summary: expect.stringContaining('"path":"f.txt"') });
      expect(existsSync(join(dir.path, 'f.txt'))).toBe(true);
      host.answerWith('allow-once');
      expect(await call(host, 'fs.read', { path: 'f.txt' })).toMatchObject({ isError: false, text: 'content' });
      expect(host.asked[1]).toMatchObject({ command: 'fs.read', summary: expect.stringContaining('files access') });
    }
    {
      await using host = await filesHost([dir.path], 'allow');
      expect(await call(host, 'fs.read', { path: 'f.txt' })).toMatchObject({ isError: false, text: 'content' });
      expect(host.asked).toHaveLength(0);
    }
  });

  it.runIf(process.getuid?.() !== 0)('reports a file system error as failed, naming its errno, never internal', async () => {
    using dir = tempDir('capnode-files-');
    mkdirSync(join(dir.path, 'locked'));
    chmodSync(join(dir.path, 'locked'), 0o500);
    try {
      await using host = await filesHost([dir.path]);
      expect(await call(host, 'fs.write', { path: 'locked/x.txt', content: 'x' })).toMatchObject({ isError: true, code: 'failed', text: expect.stringContaining('EACCES') });
      expect(await call(host, 'editor.create', { path: 'locked/y.txt', text: 'y' })).toMatchObject({ isError: true, code: 'failed', text: expect.stringContaining('EACCES') });
    } finally {
      chmodSync(join(dir.path, 'locked'), 0o700);
    }
  });

  it.runIf(existsSync('/dev/shm') && statSync('/dev/shm').dev !== statSync(tmpdir()).dev)('moves a file across file systems (copy, then remove); a directory there fails with EXDEV, never internal', async () => {
    using dir = tempDir('capnode-files-');
    const shm = mkdtempSync('/dev/shm/capnode-files-');
    try {
      writeFileSync(join(dir.path, 'f.txt'), 'across');
      mkdirSync(join(dir.path, 'd'));
      await using host = await filesHost([dir.path, shm]);
      expect(await call(host, 'fs.move', { from: 'f.txt', to: join(shm, 'f.txt') })).toMatchObject({ isError: false });
      expect(readFileSync(join(shm, 'f.txt'), 'utf8')).toBe('across');
      expect(existsSync(join(dir.path, 'f.txt'))).toBe(false);
      expect(await call(host, 'fs.move', { from: 'd', to: join(shm, 'd') })).toMatchObject({ isError: true, code: 'failed', text: expect.stringContaining('EXDEV') });
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });

  it('answers bad input with isError and a failure code, never a crash', async () => {
    using dir = tempDir('capnode-files-');
    await using host = await filesHost([dir.path]);
    expect(await call(host, 'fs.read', { path: '' })).toMatchObject({ isError: true, code: 'invalid_arguments' });
    expect(await call(host, 'fs.read', { path: 'a\u0000b' })).toMatchObject({ isError: true, code: 'invalid_arguments' });
    expect(await call(host, 'fs.read', { path: 'missing.txt' })).toMatchObject({ isError: true, code: 'invalid_arguments', text: expect.stringMatching(/Nothing exists/) });
    expect(await call(host, 'fs.read', { path: '.' })).toMatchObject({ isError: true, code: 'invalid_arguments', text: expect.stringMatching(/directory/) });
    expect(await call(host, 'fs.write', { path: 'x', content: 'a', base64: 'YQ==' })).toMatchObject({ isError: true, code: 'invalid_arguments' });
    expect(await call(host, 'fs.write', { path: 'x', base64: '***' })).toMatchObject({ isError: true, code: 'invalid_arguments' });
    expect(await call(host, 'fs.list', { glob: 'a'.repeat(1001) })).toMatchObject({ isError: true, code: 'invalid_arguments' });
    expect(await call(host, 'fs.mkdir', { path: 'p/q', parents: false })).toMatchObject({ isError: true, code: 'invalid_arguments' });
    expect(await call(host, 'fs.move', { from: '.', to: 'x' })).toMatchObject({ isError: true, code: 'denied' });
  });
});

describe('editor over MCP HTTP (real host, SDK v2 client)', () => {
  it('views numbered lines and ranges, creates, replaces exactly one match, inserts after a line', async () => {
    using dir = tempDir('capnode-editor-');
    await using host = await filesHost([dir.path]);
    expect(await call(host, 'editor.create', { path: 'code.py', text: 'def f():\n    return 1\n\nprint(f())\n' })).toMatchObject({ isError: false, structured: { action: 'create' } });
    expect(await call(host, 'editor.create', { path: 'code.py', text: 'again' })).toMatchObject({ isError: true, code: 'invalid_arguments', text: expect.stringMatching(/already exists/) });
    expect(await call(host, 'editor.view', { path: 'code.py' })).toMatchObject({ text: '     1\tdef f():\n     2\t    return 1\n     3\t\n     4\tprint(f())' });
    expect(await call(host, 'editor.view', { path: 'code.py', startLine: 2, endLine: 2 })).toMatchObject({ text: '     2\t    return 1' });
    expect(await call(host, 'editor.view', { path: 'code.py', startLine: 9 })).toMatchObject({ isError: true, code: 'invalid_arguments' });
    const replaced = await call(host, 'editor.str_replace', { path: 'code.py', oldStr: 'return 1', newStr: 'return 2' });
    expect(replaced).toMatchObject({ isError: false, text: expect.stringContaining('     2\t    return 2') });
    expect(await call(host, 'editor.insert', { path: 'code.py', insertLine: 4, text: 'print("done")' })).toMatchObject({ isError: false });
    expect(readFileSync(join(dir.path, 'code.py'), 'utf8')).toBe('def f():\n    return 2\n\nprint(f())\nprint("done")\n');
    expect(await call(host, 'editor.insert', { path: 'code.py', insertLine: 99, text: 'x' })).toMatchObject({ isError: true, code: 'invalid_arguments', text: expect.stringMatching(/has 5 lines/) });
    mkdirSync(join(dir.path, 'pkg'));
    expect(await call(host, 'editor.view', { path: '.' })).toMatchObject({ isError: false, text: expect.stringContaining('pkg/') });
  });

  it('str_replace names how many matches it found: 0, 2, and changes nothing', async () => {
    using dir = tempDir('capnode-editor-');
    writeFileSync(join(dir.path, 'f.txt'), 'same\nsame\nother\n');
    await using host = await filesHost([dir.path]);
    expect(await call(host, 'editor.str_replace', { path: 'f.txt', oldStr: 'missing', newStr: 'x' })).toMatchObject({ isError: true, code: 'invalid_arguments', text: expect.stringContaining('found 0 times') });
    expect(await call(host, 'editor.str_replace', { path: 'f.txt', oldStr: 'same', newStr: 'x' })).toMatchObject({ isError: true, code: 'invalid_arguments', text: expect.stringContaining('found 2 times') });
    expect(readFileSync(join(dir.path, 'f.txt'), 'utf8')).toBe('same\nsame\nother\n');
  });

  it('undoes edits per file in order, a create by removing the file, and refuses when the file changed since', async () => {
    using dir = tempDir('capnode-editor-');
    writeFileSync(join(dir.path, 'a.txt'), 'v0\n');
    chmodSync(join(dir.path, 'a.txt'), 0o640);
    await using host = await filesHost([dir.path]);
    expect(await call(host, 'editor.undo', { path: 'a.txt' })).toMatchObject({ isError: true, code: 'invalid_arguments', text: expect.stringMatching(/no edit/) });
    for (let version = 1; version <= MAX_UNDO_PER_FILE + 2; version++) {
      expect(await call(host, 'editor.str_replace', { path: 'a.txt', oldStr: `v${version - 1}`, newStr: `v${version}` })).toMatchObject({ isError: false });
    }
    const undone = await call(host, 'editor.undo', { path: 'a.txt' });
    expect(undone, undone.text).toMatchObject({ isError: false, structured: { action: 'undo' } });
    expect(readFileSync(join(dir.path, 'a.txt'), 'utf8')).toBe(`v${MAX_UNDO_PER_FILE + 1}\n`);
    expect(statSync(join(dir.path, 'a.txt')).mode & 0o777).toBe(0o640);
    for (let step = 1; step < MAX_UNDO_PER_FILE; step++) expect(await call(host, 'editor.undo', { path: 'a.txt' })).toMatchObject({ isError: false });
    expect(readFileSync(join(dir.path, 'a.txt'), 'utf8')).toBe('v2\n');
    // The history is bounded: the two oldest edits are gone.
    expect(await call(host, 'editor.undo', { path: 'a.txt' })).toMatchObject({ isError: true, code: 'invalid_arguments' });

    expect(await call(host, 'editor.create', { path: 'new.txt', text: 'fresh\n' })).toMatchObject({ isError: false });
    expect(await call(host, 'editor.undo', { path: 'new.txt' })).toMatchObject({ isError: false, structured: { removed: true } });
    expect(existsSync(join(dir.path, 'new.txt'))).toBe(false);

    expect(await call(host, 'editor.insert', { path: 'a.txt', insertLine: 0, text: 'top' })).toMatchObject({ isError: false });
    writeFileSync(join(dir.path, 'a.txt'), 'changed elsewhere\n');
    expect(await call(host, 'editor.undo', { path: 'a.txt' })).toMatchObject({ isError: true, code: 'failed', text: expect.stringMatching(/changed since/) });
    expect(readFileSync(join(dir.path, 'a.txt'), 'utf8')).toBe('changed elsewhere\n');
  });

  it("shows every write's diff in its approval prompt (consent ask), and writes only what was approved", async () => {
    using dir = tempDir('capnode-editor-');
    writeFileSync(join(dir.path, 'conf.ini'), 'a=1\nb=2\nc=3\n');
    await using host = await filesHost([dir.path], 'ask');
    host.answerWith('allow-once');
    expect(await call(host, 'editor.str_replace', { path: 'conf.ini', oldStr: 'b=2', newStr: 'b=20' })).toMatchObject({ isError: false });
    const approval = host.asked[0]!;
    expect(approval.diff).toBe(`--- a/${join(dir.path, 'conf.ini').slice(1)}\n+++ b/${join(dir.path, 'conf.ini').slice(1)}\n@@ -1,3 +1,3 @@\n a=1\n-b=2\n+b=20\n c=3\n`);
    const summary = formatApprovalSummary(approval);
    expect(summary.slice(summary.indexOf('diff:'))).toEqual(['diff:', `  --- a/${join(dir.path, 'conf.ini').slice(1)}`, `  +++ b/${join(dir.path, 'conf.ini').slice(1)}`, '  @@ -1,3 +1,3 @@', '   a=1', '  -b=2', '  +b=20', '   c=3']);
    expect(await call(host, 'fs.write', { path: 'conf.ini', content: 'a=1\n' })).toMatchObject({ isError: false });
    expect(host.asked[1]!.diff).toContain('-b=20\n-c=3\n');
    expect(await call(host, 'editor.create', { path: 'n.txt', text: 'x\u001b[2Jy\n' })).toMatchObject({ isError: false });
    expect(formatApprovalSummary(host.asked[2]!).join('\n')).not.toContain('\u001b');
    expect(await call(host, 'editor.insert', { path: 'conf.ini', insertLine: 1, text: 'z=9' })).toMatchObject({ isError: false });
    expect(host.asked[3]!.diff).toContain('+z=9');
    // A refused path is refused before anyone is asked.
    expect(await call(host, 'editor.create', { path: '/etc/capnode-never.txt', text: 'x' })).toMatchObject({ isError: true, code: 'denied' });
    expect(host.asked).toHaveLength(4);
    host.answerWith('deny');
    expect(await call(host, 'editor.str_replace', { path: 'conf.ini', oldStr: 'z=9', newStr: 'z=0' })).toMatchObject({ isError: true, code: 'denied' });
    expect(readFileSync(join(dir.path, 'conf.ini'), 'utf8')).toBe('a=1\nz=9\n');
  });
});

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const cliPath = join(repoRoot, 'apps/cli/dist/bin.js');
// The SDK client is a devDependency of the CLI package; tests/ has no node_modules of its own.
const requireFromCli = createRequire(join(repoRoot, 'apps/cli/package.json'));

describe.runIf(existsSync(cliPath))('files over stdio (capnode mcp, real SDK v2 client)', () => {
  it('writes and reads inside the root, refuses outside it and the config directory, with failure codes', async () => {
    const { Client } = requireFromCli('@modelcontextprotocol/client') as typeof import('@modelcontextprotocol/client');
    const { StdioClientTransport } = requireFromCli('@modelcontextprotocol/client/stdio') as typeof import('@modelcontextprotocol/client/stdio');
    using config = tempDir('capnode-home-');
    const home = { home: config.path };
    using dir = tempDir('capnode-files-stdio-');
    using other = tempDir('capnode-files-outside-');
    writeFileSync(join(home.home, 'settings.json'), JSON.stringify({ consent: { files: 'allow' }, pluginSettings: { files: { roots: [dir.path, home.home] } } }), { mode: 0o600 });
    symlinkSync(other.path, join(dir.path, 'escape'));
    const transport = new StdioClientTransport({ command: process.execPath, args: [cliPath, 'mcp'], env: { ...(process.env as Record<string, string>), CAPNODE_HOME: home.home }, stderr: 'pipe' });
    const client = new Client({ name: 'files-stdio', version: '1.0.0' });
    await client.connect(transport);
    try {
      const failure = (result: unknown) => (result as { _meta?: Record<string, { code?: string }> })._meta?.['capnode/failure']?.code;
      const written = await client.callTool({ name: 'fs.write', arguments: { path: 'note.txt', content: 'over stdio' } });
      expect(written.isError ?? false).toBe(false);
      const read = await client.callTool({ name: 'fs.read', arguments: { path: join(dir.path, 'note.txt') } });
      expect(read.structuredContent).toMatchObject({ text: 'over stdio', truncated: false });
      const escaped = await client.callTool({ name: 'fs.write', arguments: { path: 'escape/x.txt', content: 'x' } });
      expect(escaped.isError).toBe(true);
      expect(failure(escaped)).toBe('denied');
      expect(existsSync(join(other.path, 'x.txt'))).toBe(false);
      const token = await client.callTool({ name: 'fs.read', arguments: { path: join(home.home, 'mcp-token') } });
      expect(failure(token)).toBe('denied');
      const found = await client.callTool({ name: 'fs.search', arguments: { pattern: 'stdio' } });
      expect(found.structuredContent).toMatchObject({ count: 1 });
      const edited = await client.callTool({ name: 'editor.str_replace', arguments: { path: 'note.txt', oldStr: 'over', newStr: 'edited over' } });
      expect(edited.isError ?? false).toBe(false);
      const twice = await client.callTool({ name: 'editor.str_replace', arguments: { path: 'note.txt', oldStr: 'i', newStr: 'I' } });
      expect(failure(twice)).toBe('invalid_arguments');
      expect(JSON.stringify(twice.content)).toContain('found 2 times');
      expect((await client.callTool({ name: 'editor.undo', arguments: { path: 'note.txt' } })).isError ?? false).toBe(false);
      expect(readFileSync(join(dir.path, 'note.txt'), 'utf8')).toBe('over stdio');
    } finally {
      await client.close();
    }
  });
});
