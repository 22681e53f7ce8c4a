import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { defineCapability, type Availability } from '@capnode/capabilities';
import type { HostContext, HostPart } from '../../context/hostContext.js';
import { pluginsDataDirectory } from '../../setup/pluginsLoad.js';
import { startBrowserControlListener, type BrowserControlListener } from './browserListener.js';
import { createBrowserProxyCommand, createBrowserProxyUploadCommand, type BrowserProxyTarget } from './browserProxy.js';
import { createBrowserRoutes } from './browserRoutes.js';

export interface BrowserControlPart extends HostPart {
  /** Starts the service (once) and returns where it listens. */
  start(): Promise<BrowserProxyTarget>;
  /** `http://127.0.0.1:<port>` once started. */
  status(): { readonly url: string | undefined };
}

export interface BrowserControlPartOptions {
  /** Port of the service; default 0 (a free one). */
  readonly port?: number;
}

function allowProfilesOf(context: HostContext): readonly string[] {
  const raw = context.settings.get().pluginSettings.browser?.allowProfiles;
  return Array.isArray(raw) ? raw.filter((entry): entry is string => typeof entry === 'string').map((entry) => entry.trim()).filter(Boolean) : [];
}

/**
 * The browser-control service of the host: OpenClaw's browser routes on 127.0.0.1 over the host's
 * `browser.*` commands (through the pipeline, so the `browser` consent holds), and `browser.proxy`,
 * the gateway's way in, registered now. Nothing listens until the first `browser.proxy` call (or `start`).
 */
export function createBrowserControlPart(context: HostContext, options: BrowserControlPartOptions = {}): BrowserControlPart {
  const { pipeline, logging } = context;
  const mediaDir = join(pluginsDataDirectory(context.paths.home), 'browser', 'media');
  const token = randomBytes(32).toString('base64url');
  logging.knownSecrets.add(token);
  let listener: Promise<BrowserControlListener> | undefined;
  let url: string | undefined;
  const routes = createBrowserRoutes({
    mediaDir,
    invoke: async (command, args, signal) => (await pipeline.invoker.invoke({ command, args, transport: 'internal', caller: 'browser-control' }, { signal })).result,
  });
  const start = async (): Promise<BrowserProxyTarget> => {
    if (context.signal.aborted) throw new Error('the host is closing');
    listener ??= startBrowserControlListener({ port: options.port ?? 0, token, dispatch: routes, onError: (error) => logging.log('warning', `browser-control: ${String(error)}`) }).then(
      (started) => {
        url = started.url;
        logging.log('info', `browser-control service on ${started.url}`);
        return started;
      },
      (error: unknown) => {
        listener = undefined;
        throw error;
      },
    );
    const started = await listener;
    return { url: started.url, port: started.port, token, mediaDir };
  };
  const availability = async (): Promise<Availability> => (await import('@capnode/capabilities/pack')).probeBrowser();
  const proxyOptions = { target: start, expectedPort: () => options.port ?? 0, allowProfiles: () => allowProfilesOf(context), availability };
  const proxy = defineCapability({
    category: 'browser',
    commands: [createBrowserProxyCommand(proxyOptions), createBrowserProxyUploadCommand(proxyOptions)],
  });
  // browser.proxy exists while the browser commands it drives do (the pack's browser plugin, loaded later).
  let registered = false;
  const follow = () => {
    const present = pipeline.registry.resolve('browser.navigate') !== undefined;
    if (present === registered) return;
    registered = present;
    if (present) pipeline.registry.register(proxy);
    else pipeline.registry.unregister(proxy);
  };
  const unsubscribe = pipeline.registry.subscribe(follow);
  follow();
  return {
    start,
    status: () => ({ url }),
    async close() {
      unsubscribe();
      const running = listener;
      listener = undefined;
      await (await running?.catch(() => undefined))?.close();
    },
  };
}
