import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInvoker, createRegistry } from '@capnode/capabilities';
import { createLocationCapability, locationPlugin } from '@capnode/capabilities/pack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPackHost } from '../support/packHost.js';
import { eventually, isAlive } from '../support/poll.js';
import { tempDir } from '../support/testHost.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

/**
 * Stand-ins for GeoClue's where-am-i: each prints recorded output the way the demo does (the fix,
 * then it keeps running until its `-t` timeout) and records its arguments and pid.
 */
describe.runIf(process.platform !== 'win32')('location.get from recorded GeoClue output', () => {
  const dir = tempDir('capnode-location-');
  const script = (name: string) => path.join(dir.path, name);
  const argsFile = path.join(dir.path, 'args');
  const pidFile = path.join(dir.path, 'pid');
  beforeAll(async () => {
    const scripts: Record<string, string> = {
      'where-am-i-gps': `cat "${fixtures}/geoclue-gps.txt"; exec sleep 30`,
      'where-am-i-geoip': `cat "${fixtures}/geoclue-geoip.txt"; exec sleep 30`,
      'where-am-i-disabled': `echo 'Client object: /org/freedesktop/GeoClue2/Client/2'; echo 'Geolocation disabled. Quitting..'; exit 0`,
      'where-am-i-denied': `echo "(where-am-i:4242): GLib-GIO-CRITICAL **: Failed to connect to GeoClue2 service: GDBus.Error:org.freedesktop.DBus.Error.AccessDenied: 'geoclue-where-am-i' disallowed, no agent for UID 1000" >&2; exit 255`,
      'where-am-i-noservice': `echo "(where-am-i:4243): CRITICAL **: Failed to connect to GeoClue2 service: GDBus.Error:org.freedesktop.DBus.Error.ServiceUnknown: The name org.freedesktop.GeoClue2 was not provided by any .service files" >&2; exit 255`,
      // Never gets a fix: prints its client, waits out its own -t, exits 0 (as where-am-i does).
      'where-am-i-silent': `echo 'Client object: /org/freedesktop/GeoClue2/Client/4'; sleep "$2"; exit 0`,
    };
    for (const [name, body] of Object.entries(scripts)) {
      await writeFile(script(name), `#!/bin/sh\necho $$ > "${pidFile}"\necho "$@" > "${argsFile}"\n${body}\n`);
      await chmod(script(name), 0o755);
    }
  });
  afterAll(() => dir[Symbol.dispose]());

  it('returns OpenClaw’s shape over MCP, stops where-am-i once it printed a fix, passes timeout and accuracy', async () => {
    await using host = await startPackHost([createLocationCapability({ whereAmI: script('where-am-i-gps') })]);
    const started = performance.now();
    const result = await host.call('location.get', { timeoutMs: 20_000, desiredAccuracy: 'precise' });
    expect(result.isError, result.text).toBe(false);
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(result.structured).toEqual({
      lat: 52.520008,
      lon: 13.404954,
      accuracyMeters: 25,
      altitudeMeters: 34,
      speedMps: 1.5,
      headingDeg: 270,
      timestamp: '2026-12-01T11:00:00.000Z',
      isPrecise: true,
      source: 'gps',
      description: 'GPS',
    });
    expect((await readFile(argsFile, 'utf8')).trim()).toBe('-t 20 -a 8');
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    await eventually(() => !isAlive(pid), { what: 'where-am-i to be stopped' });
  });

  it('accepts the tray aliases (accuracy, maxAge, locationTimeout) and reports a coarse GeoIP fix', async () => {
    const invoker = createInvoker({ registry: createRegistry([createLocationCapability({ whereAmI: script('where-am-i-geoip') })]) });
    const outcome = await invoker.invoke({ command: 'location.get', args: { accuracy: 'coarse', locationTimeout: 5000, maxAge: 0 }, transport: 'internal' });
    expect(outcome.result).toMatchObject({ ok: true, structured: { lat: 48.8566, lon: 2.3522, accuracyMeters: 25_000, isPrecise: false, source: 'ip', timestamp: '2026-12-01T10:59:00.000Z' } });
    expect((outcome.result as { structured: Record<string, unknown> }).structured).not.toHaveProperty('altitudeMeters');
    expect((await readFile(argsFile, 'utf8')).trim()).toBe('-t 5 -a 4');
  });

  it('answers from the last fix within maxAgeMs, and asks again for a finer accuracy', async () => {
    const invoker = createInvoker({ registry: createRegistry([createLocationCapability({ whereAmI: script('where-am-i-geoip') })]) });
    await invoker.invoke({ command: 'location.get', args: { desiredAccuracy: 'balanced' }, transport: 'internal' });
    await writeFile(argsFile, '');
    const cached = await invoker.invoke({ command: 'location.get', args: { maxAgeMs: 60_000, desiredAccuracy: 'coarse' }, transport: 'internal' });
    expect(cached.result).toMatchObject({ ok: true, structured: { cached: true, lat: 48.8566 } });
    expect(await readFile(argsFile, 'utf8')).toBe('');
    const finer = await invoker.invoke({ command: 'location.get', args: { maxAgeMs: 60_000, desiredAccuracy: 'precise' }, transport: 'internal' });
    expect((finer.result as { structured: Record<string, unknown> }).structured).not.toHaveProperty('cached');
  });

  it.each([
    ['where-am-i-disabled', 'LOCATION_DISABLED', 'unavailable'],
    ['where-am-i-denied', 'PERMISSION_REQUIRED', 'denied'],
    ['where-am-i-noservice', 'UNAVAILABLE', 'unavailable'],
  ])('%s fails with OpenClaw code %s in data.code', async (name, openclawCode, code) => {
    const invoker = createInvoker({ registry: createRegistry([createLocationCapability({ whereAmI: script(name) })]) });
    const outcome = await invoker.invoke({ command: 'location.get', args: { timeoutMs: 5000 }, transport: 'internal' });
    expect(outcome.result).toMatchObject({ ok: false, error: { code, message: expect.stringMatching(new RegExp(`^${openclawCode}: `)), data: { code: openclawCode } } });
  });

  it('fails TIMEOUT when GeoClue gives no fix within timeoutMs', async () => {
    await using host = await startPackHost([createLocationCapability({ whereAmI: script('where-am-i-silent') })]);
    const result = await host.call('location.get', { timeoutMs: 1000 });
    expect(result).toMatchObject({ isError: true, text: expect.stringMatching(/^TIMEOUT: /) });
  });

  it('refuses bad input: unknown accuracy, limits, unknown fields', async () => {
    await using host = await startPackHost([createLocationCapability({ whereAmI: script('where-am-i-gps') })]);
    expect((await host.call('location.get', { desiredAccuracy: 'exact' })).isError).toBe(true);
    expect((await host.call('location.get', { timeoutMs: 999 })).isError).toBe(true);
    expect((await host.call('location.get', { timeoutMs: 120_001 })).isError).toBe(true);
    expect((await host.call('location.get', { maxAgeMs: -1 })).isError).toBe(true);
    expect((await host.call('location.get', { where: 'here' })).isError).toBe(true);
  });

  it('declares location consent; the plugin reads whereAmI from its settings section', async () => {
    const capability = (await (locationPlugin as (context: never) => unknown)({ name: 'location', settings: { whereAmI: script('where-am-i-gps') }, log: () => {}, dataDir: dir.path, signal: new AbortController().signal } as never)) as ReturnType<typeof createLocationCapability>;
    expect(capability.commands.map((command) => [command.name, command.consent])).toEqual([['location.get', 'location']]);
    expect(await capability.commands[0]!.availability!({})).toEqual({ available: true });
    const missing = createLocationCapability({ whereAmI: path.join(dir.path, 'missing') });
    expect(await missing.commands[0]!.availability!({})).toEqual({ available: false, install: expect.stringMatching(/geoclue-2-demo/) });
  });
});
