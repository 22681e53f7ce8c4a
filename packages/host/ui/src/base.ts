// The dashboard lives under a secret base path, `/d/<random>/` (the session cookie's Path): every
// URL the page requests is built on it, read from the address bar (CSP allows no inline script).

/** `/d/<random>/` of the current page (with its trailing slash), or `/` outside one. */
export function basePath(): string {
  return /^\/d\/[^/]+\//.exec(location.pathname)?.[0] ?? '/';
}

/** `path` (`/api/status`) under the base path. */
export function underBase(path: string): string {
  return basePath() + path.replace(/^\/+/, '');
}
