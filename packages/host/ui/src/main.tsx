// The capnode dashboard: a session check, then the nav and the current page.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, describeError, loadSession, type Session } from './api.js';
import { refreshLive, startLive, useLive } from './live.js';
import { PAGES, useRoute, type PageId } from './router.js';
import { ActivityPage } from './pages/activity.js';
import { ApprovalsPage } from './pages/approvals.js';
import { ConnectPage } from './pages/connect.js';
import { GatewayPage } from './pages/gateway.js';
import { OpenAgentPage } from './pages/openagent.js';
import { ServersPage } from './pages/servers.js';
import { SettingsPage } from './pages/settings.js';
import { SetupPage } from './pages/setup.js';
import { StatusPage } from './pages/status.js';
import { TokenPage } from './pages/token.js';

const NAV: readonly PageId[] = ['status', 'approvals', 'connect', 'token', 'settings', 'servers', 'gateway', 'openagent', 'activity'];

function titleOf(page: PageId): string {
  return PAGES.find((entry) => entry.id === page)?.title ?? page;
}

function Nav(props: { page: PageId }) {
  const { pending } = useLive();
  return (
    <nav aria-label="Dashboard">
      <ul>
        {NAV.map((page) => (
          <li key={page}>
            <a href={`#/${page}`} aria-current={props.page === page ? 'page' : undefined}>
              {titleOf(page)}
              {page === 'approvals' ? (
                <span class={`count${pending.length ? ' count-active' : ''}`} data-testid="pending-count">
                  {' '}
                  {pending.length}
                  <span class="visually-hidden"> pending</span>
                </span>
              ) : null}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function Page(props: { page: PageId; session: Session }) {
  switch (props.page) {
    case 'setup':
      return <SetupPage />;
    case 'approvals':
      return <ApprovalsPage />;
    case 'connect':
      return <ConnectPage />;
    case 'token':
      return <TokenPage />;
    case 'settings':
      return <SettingsPage />;
    case 'servers':
      return <ServersPage />;
    case 'gateway':
      return <GatewayPage />;
    case 'openagent':
      return <OpenAgentPage />;
    case 'activity':
      return <ActivityPage />;
    default:
      return <StatusPage />;
  }
}

function Shell(props: { session: Session }) {
  const page = useRoute(props.session.firstRun ? 'setup' : 'status');
  const { pending, connected } = useLive();
  const first = useRef(true);
  useEffect(() => {
    document.title = `${titleOf(page)}${pending.length ? ` (${pending.length} pending)` : ''} · capnode`;
  }, [page, pending.length]);
  useEffect(() => {
    // Move focus to the new page's heading on navigation (not on the first load), so keyboard and
    // screen reader users land on it.
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById('page-title')?.focus();
  }, [page]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <p class="brand">
          capnode <span class="muted">{props.session.version}</span>
        </p>
        <Nav page={page} />
        <p class="stream" role="status" aria-live="polite">
          {connected ? '' : 'Live updates paused — reconnecting…'}
        </p>
      </header>
      <main id="main">
        <Page page={page} session={props.session} />
      </main>
    </>
  );
}

function SignedOut() {
  return (
    <main id="main" class="signed-out">
      <h1>capnode dashboard</h1>
      <p>
        This dashboard needs a session. Open it with <code>capnode ui</code> on this machine (or run <code>capnode ui --print-url</code> and open the URL it prints).
      </p>
    </main>
  );
}

function App() {
  const [session, setSession] = useState<Session | undefined>(undefined);
  const [failure, setFailure] = useState<unknown>(undefined);
  useEffect(() => {
    // The first status is read beside the session check, not after it: the status page paints sooner.
    void refreshLive();
    loadSession().then(
      (value) => {
        setSession(value);
        startLive();
      },
      (error: unknown) => setFailure(error),
    );
  }, []);
  if (failure instanceof ApiError && (failure.status === 401 || failure.status === 403)) return <SignedOut />;
  if (failure)
    return (
      <main id="main">
        <h1>capnode dashboard</h1>
        <p role="alert">The host did not answer: {describeError(failure)}</p>
      </main>
    );
  if (!session) return <p class="boot">Loading the capnode dashboard…</p>;
  return <Shell session={session} />;
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(<App />, root);
}
