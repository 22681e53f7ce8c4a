import type { TrayHostLink } from './hostLink.js';
import { TrayError } from './errors.js';
import type { TrayAction } from './menu.js';

/** The desktop side effects the tray uses; injectable so the click logic is testable without a desktop. */
export interface TrayDesktop {
  writeClipboard(text: string): Promise<void>;
  openInBrowser(url: string): Promise<void>;
}

export interface TrayActionDeps {
  readonly link: TrayHostLink;
  readonly desktop: TrayDesktop;
  /** Current MCP URL, for "Copy MCP URL". */
  readonly mcpUrl: () => string | undefined;
  /** Called for "Quit". */
  readonly quit: () => void;
}

/**
 * The one-time login URL with the dashboard page as its fragment (`#/approvals`): the login's 303
 * to `/` carries no fragment, so the browser keeps this one (RFC 9110 §10.2.2) and lands on the page.
 */
export function dashboardPageUrl(loginUrl: string, page: 'approvals' | undefined): string {
  if (!page) return loginUrl;
  const url = new URL(loginUrl);
  url.hash = `/${page}`;
  return url.href;
}

/**
 * Performs one tray action; resolves with a short confirmation for the status line, or rejects
 * with a TrayError whose message is meant for the person.
 */
export async function runTrayAction(action: TrayAction, deps: TrayActionDeps): Promise<string | undefined> {
  switch (action.type) {
    case 'open-dashboard': {
      const login = await deps.link.loginUrl();
      await deps.desktop.openInBrowser(dashboardPageUrl(login, action.page));
      return undefined;
    }
    case 'patch-settings':
      await deps.link.patchSettings(action.patch);
      return undefined;
    case 'copy': {
      const text = action.what === 'token' ? deps.link.mcpToken() : deps.mcpUrl();
      if (text === undefined) throw new TrayError('failed', action.what === 'token' ? `no MCP token yet (${deps.link.paths.mcpToken})` : 'the MCP server is not listening');
      await deps.desktop.writeClipboard(text);
      return action.what === 'token' ? 'token copied' : 'MCP URL copied';
    }
    case 'quit':
      deps.quit();
      return undefined;
  }
}
