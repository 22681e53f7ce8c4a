import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A form page: a text field, a select and a button that writes a greeting built from both. */
export const FORM_PAGE = `<!doctype html>
<html><head><title>Form page</title></head><body>
<h1>Sign in</h1>
<label for="name">Name</label><input id="name" type="text">
<label for="color">Color</label><select id="color"><option value="red">Red</option><option value="blue">Blue</option></select>
<button id="go" onclick="document.getElementById('out').textContent = 'Hello, ' + document.getElementById('name').value + ' (' + document.getElementById('color').value + ')'">Greet</button>
<p id="out"></p>
</body></html>`;

/** Static pages served on 127.0.0.1 (path → HTML); closes on dispose. */
export interface PageServer extends AsyncDisposable {
  readonly origin: string;
  url(path: string): string;
}

export async function servePages(pages: Readonly<Record<string, string>>): Promise<PageServer> {
  const server: Server = createServer((request, response) => {
    const body = pages[new URL(request.url ?? '/', 'http://127.0.0.1').pathname];
    if (body === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (path) => `${origin}${path}`,
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The ref of the snapshot line for `role` named `name` (`- textbox "Name" [ref=e5]`). */
export function refFor(snapshot: string, role: string, name: string): string {
  const line = snapshot.split('\n').find((entry) => entry.includes(`${role} "${name}"`) && entry.includes('[ref='));
  const ref = line ? /\[ref=([A-Za-z0-9]+)\]/.exec(line)?.[1] : undefined;
  if (!ref) throw new Error(`no ${role} "${name}" in snapshot:\n${snapshot}`);
  return ref;
}
