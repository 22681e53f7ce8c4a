// Hash routing (`#/status`), so the server serves one index.html. A first load on a page path
// (`<base>/setup`, as the login redirect may send) moves to the same page's hash.
import { useEffect, useState } from 'preact/hooks';
import { basePath } from './base.js';

export const PAGES = [
  { id: 'status', title: 'Status' },
  { id: 'approvals', title: 'Approvals' },
  { id: 'connect', title: 'Connect a client' },
  { id: 'token', title: 'Token' },
  { id: 'settings', title: 'Settings' },
  { id: 'servers', title: 'MCP servers' },
  { id: 'gateway', title: 'Gateway' },
  { id: 'openagent', title: 'OpenAgent' },
  { id: 'activity', title: 'Activity' },
  { id: 'setup', title: 'Setup' },
] as const;

export type PageId = (typeof PAGES)[number]['id'];

function isPage(value: string): value is PageId {
  return PAGES.some((page) => page.id === value);
}

function current(): PageId | undefined {
  const fromHash = location.hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  if (isPage(fromHash)) return fromHash;
  const base = basePath();
  const fromPath = location.pathname.slice(base.length).split('/')[0] ?? '';
  if (isPage(fromPath)) {
    history.replaceState(null, '', `${base}#/${fromPath}`);
    return fromPath;
  }
  return undefined;
}

export function navigate(page: PageId): void {
  location.hash = `#/${page}`;
}

/** The page in the address bar, or `fallback` when it names none. */
export function useRoute(fallback: PageId): PageId {
  const [page, setPage] = useState<PageId | undefined>(current);
  useEffect(() => {
    const onChange = () => setPage(current());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return page ?? fallback;
}
