import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createStaticFiles, signInPage } from './static.js';

const root = mkdtempSync(join(tmpdir(), 'capnode-ui-'));
const ui = join(root, 'ui');
mkdirSync(join(ui, 'assets'), { recursive: true });
writeFileSync(join(ui, 'index.html'), '<!doctype html><title>capnode</title><script type="module" src="/assets/app.js"></script>');
writeFileSync(join(ui, 'assets', 'app.js'), 'console.log(1)');
writeFileSync(join(root, 'secret.json'), '{"secret":true}');
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('dashboard static files', () => {
  it('serves files of the UI directory with their type, and index.html with the CSP', async () => {
    const files = createStaticFiles(ui);
    const script = await files.file('/assets/app.js');
    expect(script?.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await script?.text()).toBe('console.log(1)');
    const index = await files.index();
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('x-frame-options')).toBe('DENY');
    expect(await index.text()).toContain('/assets/app.js');
  });

  it('never serves a file outside it, or of an unknown type', async () => {
    const files = createStaticFiles(ui);
    expect(await files.file('/../secret.json')).toBeUndefined();
    expect(await files.file('/assets/../../secret.json')).toBeUndefined();
    expect(await files.file('/missing.js')).toBeUndefined();
    writeFileSync(join(ui, 'notes.txt'), 'x');
    expect(await files.file('/notes.txt')).toBeUndefined();
  });

  it('without a built UI says so, and the sign-in page escapes its text', async () => {
    const missing = createStaticFiles(undefined);
    expect(await (await missing.index()).text()).toContain('not built');
    expect(await signInPage(403, '<script>x</script>').text()).not.toContain('<script>x');
  });
});
