import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { createUploadStore } from './uploadStore.js';

const dirs: string[] = [];
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'capnode-uploads-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

test('writes 0600 files by content hash under a 0700 uploads/, once', async () => {
  const workspace = temp();
  const store = createUploadStore(workspace);
  const path = await store.write(Buffer.from('hello'), 'txt');
  expect(path).toMatch(/uploads\/[0-9a-f]{24}\.txt$/);
  expect(lstatSync(path).mode & 0o777).toBe(0o600);
  expect(lstatSync(join(workspace, 'uploads')).mode & 0o777).toBe(0o700);
  expect(await store.write(Buffer.from('hello'), 'txt')).toBe(path);
});

test('an extension outside the allow-list becomes bin', async () => {
  const store = createUploadStore(temp());
  expect(await store.write(Buffer.from('x'), 'html')).toMatch(/\.bin$/);
  expect(await store.write(Buffer.from('y'), '../../x')).toMatch(/\.bin$/);
});

test('a symlinked uploads/ is refused and nothing is written through it', async () => {
  const workspace = temp();
  const elsewhere = temp();
  symlinkSync(elsewhere, join(workspace, 'uploads'));
  await expect(createUploadStore(workspace).write(Buffer.from('x'), 'txt')).rejects.toMatchObject({ code: 'unsafe_path', message: expect.stringMatching(/is a symbolic link/) });
  expect(readdirSync(elsewhere)).toEqual([]);
});

test('uploads/ swapped for a symlink after the first write is refused too', async () => {
  const workspace = temp();
  const elsewhere = temp();
  const store = createUploadStore(workspace);
  await store.write(Buffer.from('first'), 'txt');
  rmSync(join(workspace, 'uploads'), { recursive: true });
  symlinkSync(elsewhere, join(workspace, 'uploads'));
  await expect(store.write(Buffer.from('second'), 'txt')).rejects.toMatchObject({ code: 'unsafe_path' });
  expect(readdirSync(elsewhere)).toEqual([]);
});

test('a symlink planted at the file name is never followed', async () => {
  const workspace = temp();
  const store = createUploadStore(workspace);
  const path = await store.write(Buffer.from('payload'), 'txt');
  rmSync(path);
  const target = join(temp(), 'victim');
  writeFileSync(target, 'keep');
  symlinkSync(target, path);
  await expect(store.write(Buffer.from('payload'), 'txt')).rejects.toMatchObject({ code: 'unsafe_path' });
  mkdirSync(join(workspace, 'x'));
  expect(readdirSync(join(workspace, 'uploads'))).toHaveLength(1);
  expect(lstatSync(path).isSymbolicLink()).toBe(true);
});

test('uploads/ that is a file is refused', async () => {
  const workspace = temp();
  writeFileSync(join(workspace, 'uploads'), '');
  await expect(createUploadStore(workspace).write(Buffer.from('x'), 'txt')).rejects.toMatchObject({ code: 'unsafe_path', message: expect.stringMatching(/not a directory/) });
});

test('a workspace that does not exist yet is created', async () => {
  const workspace = join(temp(), 'not', 'yet');
  expect(await createUploadStore(workspace).write(Buffer.from('x'), 'txt')).toMatch(/not\/yet\/uploads\//);
});
