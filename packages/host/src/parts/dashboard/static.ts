import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { html } from './reply.js';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

/**
 * Where the built UI is: `dist/ui/` beside the bundled host (`dist/*.js`), or, running from sources
 * (tests), `packages/host/dist/ui/`. `undefined` when it was not built.
 */
export function findUiDirectory(): string | undefined {
  for (const candidate of ['./ui/', '../../../dist/ui/']) {
    const dir = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(join(dir, 'index.html'))) return dir;
  }
  return undefined;
}

function page(title: string, text: string): string {
  const escaped = text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1><p>${escaped}</p></main></body></html>\n`;
}

/** The page a browser without a session sees. */
export function signInPage(status = 200, text = 'Open the dashboard with `capnode ui` (it signs you in with a one-time link).'): Response {
  return html(status, page('capnode dashboard', text));
}

/** Serves the built UI: files by exact path under the UI directory, `index.html` for page routes. */
export function createStaticFiles(dir: string | undefined): { file(path: string): Promise<Response | undefined>; index(): Promise<Response> } {
  const root = dir === undefined ? undefined : resolve(dir);
  const read = async (path: string): Promise<Response | undefined> => {
    if (root === undefined) return undefined;
    const full = resolve(root, `.${path}`);
    if (!full.startsWith(root + sep)) return undefined;
    const type = TYPES[extname(full).toLowerCase()];
    if (type === undefined) return undefined;
    try {
      const body = await readFile(full);
      const headers: Record<string, string> = { 'content-type': type, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' };
      return type.startsWith('text/html') ? html(200, body.toString('utf8')) : new Response(body, { status: 200, headers });
    } catch {
      return undefined;
    }
  };
  return {
    file: read,
    async index() {
      return (await read('/index.html')) ?? html(200, page('capnode dashboard', 'The dashboard UI is not built (pnpm build builds packages/host/dist/ui/); its API at /api/ works.'));
    },
  };
}
