import { openBrowser } from '@capnode/host/setup';
import { adminEndpoints, type Context } from '../context.js';
import { CliError, isCliError } from '../errors.js';
import { notRunningMessage, readText, send, unexpectedStatus, type Endpoint } from '../http.js';

/** A fresh one-time login URL from the host behind `endpoint` (`POST /_capnode/ui/login`). */
async function loginUrl(endpoint: Endpoint): Promise<string> {
  const result = await send(endpoint, new URL('ui/login', endpoint.url).href, { method: 'POST', body: '{}' });
  if (result.status === 409 || result.status === 404) {
    const text = await readText(result.response).catch(() => '');
    let detail = text;
    try {
      detail = String((JSON.parse(text) as { error?: unknown }).error ?? text);
    } catch {
      // Not JSON: shown as is.
    }
    throw new CliError('failure', `the host at ${new URL('/', endpoint.url).href} has no running dashboard: ${detail.slice(0, 300)} (settings.json "dashboard": { "enabled": true })`);
  }
  if (result.status !== 200) throw await unexpectedStatus(endpoint, result);
  const value = JSON.parse(await readText(result.response)) as { url?: unknown };
  if (typeof value.url !== 'string' || !/^http:\/\/[^/]+\/login\?code=/.test(value.url)) throw new CliError('failure', 'the host answered without a login URL');
  return value.url;
}

/**
 * `capnode ui [--print-url]`: asks the running host (the one `--url` names, else every live host of
 * this config directory in turn) for a one-time dashboard login URL and opens it in the default
 * browser; with `--print-url` prints that URL as the only line on stdout instead. Without a browser
 * opener the URL is printed, and stderr says why.
 */
export async function ui(context: Context): Promise<number> {
  if (context.args.positionals.length > 1) throw new CliError('usage', 'usage: capnode ui [--print-url]');
  const endpoints = adminEndpoints(context);
  let url: string | undefined;
  let firstError: unknown;
  for (const endpoint of endpoints) {
    try {
      url = await loginUrl(endpoint);
      break;
    } catch (error) {
      firstError ??= error;
    }
  }
  if (url === undefined) {
    if (isCliError(firstError) && firstError.code === 'unreachable') {
      throw new CliError('unreachable', `${notRunningMessage(new URL('/', endpoints[0]!.url).href)} (the dashboard is served by a running host)`);
    }
    throw firstError;
  }
  if (context.args.flags.has('print-url')) {
    context.out(url);
    return 0;
  }
  const opened = await openBrowser(url, { env: context.env });
  if (opened.opened) {
    context.err('capnode: opened the dashboard in your browser (the sign-in link works once, for 60 s)');
    return 0;
  }
  context.err(`capnode: no browser opener (${opened.command}) started or it failed (no display?); open this link yourself (it works once, for 60 s):`);
  context.out(url);
  return 0;
}
