import { execFile } from 'node:child_process';

/**
 * Reads and clicks the menu of a running systray2 helper the way a desktop's tray host does: over
 * D-Bus (libayatana-appindicator exports it as com.canonical.dbusmenu), with systemd's busctl.
 */

const MENU_PATH = '/org/ayatana/NotificationItem/systray/Menu';
const ITEM_PATH = '/org/ayatana/NotificationItem/systray';

function busctl(address: string, args: readonly string[], timeoutSeconds = 3): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('busctl', [`--address=${address}`, '--json=short', `--timeout=${timeoutSeconds}`, ...args], { timeout: (timeoutSeconds + 2) * 1000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`busctl ${args.join(' ')}: ${stderr.trim() || error.message}`));
      else resolve(stdout);
    });
  });
}

export interface DbusMenuItem {
  readonly id: number;
  readonly label: string;
  readonly enabled: boolean;
  readonly separator: boolean;
}

type Variant = { readonly type: string; readonly data: unknown };
type LayoutNode = [number, Record<string, Variant>, { readonly data: LayoutNode }[]];

/** The unique bus names of `pid` (the helper has two: GTK's and the indicator's). */
async function namesOf(address: string, pid?: number): Promise<string[]> {
  const list = JSON.parse(await busctl(address, ['list'])) as { name: string; pid: number | null; process: string | null }[];
  return list.filter((entry) => entry.name.startsWith(':') && entry.process !== 'busctl' && (pid === undefined || entry.pid === pid)).map((entry) => entry.name).reverse();
}

/** The items of the menu `name` exports, top level, in order. */
export async function menuItems(address: string, name: string): Promise<DbusMenuItem[]> {
  const reply = JSON.parse(await busctl(address, ['call', name, MENU_PATH, 'com.canonical.dbusmenu', 'GetLayout', 'iias', '0', '--', '-1', '0'])) as { data: [number, LayoutNode] };
  const [, root] = reply.data;
  return root[2].map(({ data: [id, props] }) => ({
    id,
    label: typeof props.label?.data === 'string' ? props.label.data : '',
    enabled: props.enabled?.data !== false,
    separator: props.type?.data === 'separator',
  }));
}

/** Finds the bus name that exports the tray menu (of `pid` when given), waiting until it appears. */
export async function findTrayMenu(address: string, options: { readonly pid?: number; readonly timeoutMs?: number } = {}): Promise<string> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    for (const name of await namesOf(address, options.pid)) {
      try {
        if ((await menuItems(address, name)).length > 0) return name;
      } catch {
        // Not the indicator's connection (or not exported yet).
      }
    }
    if (Date.now() > deadline) throw new Error('no tray menu appeared on the bus');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Clicks the item with `label` as a tray host does (dbusmenu `Event(id, "clicked")`). */
export async function clickMenuItem(address: string, name: string, label: string): Promise<void> {
  const item = (await menuItems(address, name)).find((entry) => entry.label === label);
  if (!item) throw new Error(`no menu item '${label}'`);
  await busctl(address, ['call', name, MENU_PATH, 'com.canonical.dbusmenu', 'Event', 'isvu', String(item.id), 'clicked', 's', '', '0']);
}

/** The file the indicator shows as its icon (the helper writes each icon it gets to a temporary file). */
export async function trayIconFile(address: string, name: string): Promise<string> {
  const reply = JSON.parse(await busctl(address, ['get-property', name, ITEM_PATH, 'org.kde.StatusNotifierItem', 'IconName'])) as Variant;
  return String(reply.data);
}
