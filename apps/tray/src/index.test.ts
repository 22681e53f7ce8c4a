import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { expectEntryImports } from '../../../tests/support/entrySurface.js';

const sourceDirectory = dirname(fileURLToPath(import.meta.url));

describe('@capnode/tray entry', () => {
  it('loads siblings only through their public entries', () => {
    expectEntryImports(join(sourceDirectory, 'index.ts'), (specifier) => !specifier.includes('/internal'));
  });

  it('exports exactly the documented runtime API', async () => {
    const entry = await import('./index.js');
    expect(Object.keys(entry).sort()).toEqual([
      'ADMIN_REQUEST_TIMEOUT_MS',
      'TRAY_ITEM_KEYS',
      'TrayError',
      'adminRequest',
      'approvalNotificationText',
      'buildTrayMenu',
      'bundledTrayHelper',
      'createAttachedLink',
      'createInProcessLink',
      'dashboardPageUrl',
      'discoverAdminTarget',
      'followApprovalEvents',
      'inProcessHostOptions',
      'isTrayError',
      'loadTrayIcons',
      'notifyApproval',
      'openInBrowser',
      'runTrayAction',
      'runnableTrayHelper',
      'startTray',
      'startTrayHelper',
      'statusLine',
      'trayActionFor',
      'trayAssetsDir',
      'trayHelperCacheDir',
      'trayIcon',
      'writeClipboard',
    ]);
  });
});
