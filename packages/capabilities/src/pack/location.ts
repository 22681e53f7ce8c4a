import { z } from 'zod';
import { defineCapability, defineCommand, type Availability, type Capability } from '../contract.js';
import { CapabilityError, type CapabilityErrorCode } from '../errors.js';
import { definePlugin, type PluginContext } from '../plugin.js';
import type { DesiredAccuracy, LocationErrorCode, LocationFailure, LocationFix } from './locationBackend.js';
import { checkRun, powershellArgs, runTool } from './internal/voiceProcess.js';
import { envOf, findFirst, platformOf, type PackEnvironment } from './internal/voiceProbe.js';

export type { LocationErrorCode } from './locationBackend.js';

/** GeoClue's demo client, as Debian installs it (package `geoclue-2-demo`). */
export const WHERE_AM_I = '/usr/libexec/geoclue-2.0/demos/where-am-i';

/** Options of {@link createLocationCapability}. */
export interface LocationOptions extends PackEnvironment {
  /**
   * Linux: the `where-am-i` program to run (plugin setting `pluginSettings.location.whereAmI`);
   * default GeoClue's demo. Tests point it at a script printing recorded GeoClue output.
   */
  readonly whereAmI?: string;
}

const INSTALL: Readonly<Record<string, string>> = {
  linux: 'GeoClue and its demo client (Debian/Ubuntu: apt install geoclue-2.0 geoclue-2-demo)',
  darwin: 'CoreLocationCLI (brew install corelocationcli)',
  win32: 'Windows PowerShell (powershell.exe) with location services',
};

/** Tray spellings of the accuracy. */
const ACCURACY_ALIASES: Readonly<Record<string, DesiredAccuracy>> = {
  coarse: 'coarse',
  low: 'coarse',
  balanced: 'balanced',
  medium: 'balanced',
  default: 'balanced',
  precise: 'precise',
  high: 'precise',
  best: 'precise',
};

const accuracyAlias = z.enum(Object.keys(ACCURACY_ALIASES) as [string, ...string[]]).transform((value) => ACCURACY_ALIASES[value]!);

const getInput = z
  .strictObject({
    timeoutMs: z.number().int().min(1000).max(120_000).optional().describe('How long to wait for a fix (default 10000).'),
    maxAgeMs: z.number().int().min(0).max(86_400_000).optional().describe('A fix this recent, from an earlier call, is returned at once (default 0: always a new one).'),
    desiredAccuracy: z.enum(['coarse', 'balanced', 'precise']).optional().describe('Default balanced.'),
    locationTimeout: z.number().int().min(1000).max(120_000).optional().describe('Tray alias of timeoutMs.'),
    maxAge: z.number().int().min(0).max(86_400_000).optional().describe('Tray alias of maxAgeMs.'),
    accuracy: accuracyAlias.optional().describe('Tray alias of desiredAccuracy (also low, medium, default, high, best).'),
  })
  .transform((value) => ({
    timeoutMs: value.timeoutMs ?? value.locationTimeout ?? 10_000,
    maxAgeMs: value.maxAgeMs ?? value.maxAge ?? 0,
    desiredAccuracy: value.desiredAccuracy ?? value.accuracy ?? ('balanced' as DesiredAccuracy),
  }));

const CAPABILITY_CODES: Readonly<Record<LocationErrorCode, CapabilityErrorCode>> = {
  LOCATION_DISABLED: 'unavailable',
  PERMISSION_REQUIRED: 'denied',
  TIMEOUT: 'timeout',
  UNAVAILABLE: 'unavailable',
};

/** A failure with OpenClaw's code in `data.code` (gateway error code) and a capnode code for local callers. */
export function locationError(failure: LocationFailure): CapabilityError {
  return new CapabilityError(CAPABILITY_CODES[failure.code], `${failure.code}: ${failure.detail}`, { data: { code: failure.code } });
}

/** Where the fix came from: `gps`, `wifi`, `cell`, `ip`, or the backend's name when it does not say. */
export function locationSource(description: string | undefined, backend: string): string {
  if (!description) return backend;
  if (/gps|gnss|nmea/i.test(description)) return 'gps';
  if (/wi-?fi|wlan/i.test(description)) return 'wifi';
  if (/3g|4g|cell|modem|mobile/i.test(description)) return 'cell';
  if (/geoip|\bip\b/i.test(description)) return 'ip';
  return backend;
}

/** OpenClaw's result shape for a fix. */
export function toLocationResult(fix: LocationFix, backend: string, nowMs: number): Record<string, unknown> {
  return {
    lat: fix.lat,
    lon: fix.lon,
    accuracyMeters: fix.accuracyMeters,
    ...(fix.altitudeMeters !== undefined ? { altitudeMeters: fix.altitudeMeters } : {}),
    ...(fix.speedMps !== undefined ? { speedMps: fix.speedMps } : {}),
    ...(fix.headingDeg !== undefined ? { headingDeg: fix.headingDeg } : {}),
    timestamp: new Date(fix.timestampMs ?? nowMs).toISOString(),
    isPrecise: fix.accuracyMeters > 0 && fix.accuracyMeters <= 100,
    source: locationSource(fix.description, backend),
    ...(fix.description ? { description: fix.description } : {}),
  };
}

interface Locator {
  readonly backend: string;
  readonly file: string;
}

async function findLocator(options: LocationOptions): Promise<Locator | undefined> {
  const platform = platformOf(options);
  if (platform === 'darwin') {
    const found = await findFirst(['CoreLocationCLI', 'corelocationcli'], options);
    return found && { backend: 'corelocation', file: found.file };
  }
  if (platform === 'win32') {
    const found = await findFirst(['powershell', 'pwsh'], options);
    return found && { backend: 'windows', file: found.file };
  }
  const found = await findFirst([options.whereAmI ?? WHERE_AM_I], options);
  return found && { backend: 'geoclue', file: found.file };
}

/** The locator program exists (a file check; GeoClue itself is asked only when a call comes). */
export async function probeLocation(options: LocationOptions = {}): Promise<Availability> {
  return (await findLocator(options)) ? { available: true } : { available: false, install: INSTALL[platformOf(options)] ?? INSTALL.linux! };
}

async function locate(locator: Locator, request: { timeoutMs: number; desiredAccuracy: DesiredAccuracy }, options: LocationOptions, signal: AbortSignal): Promise<LocationFix> {
  const backend = await import('./locationBackend.js');
  const env = envOf(options);
  const slack = 3_000;
  if (locator.backend === 'geoclue') {
    const result = checkRun(
      await runTool({
        file: locator.file,
        args: backend.whereAmIArgs({ timeoutMs: request.timeoutMs, accuracy: request.desiredAccuracy }),
        // A decimal point whatever the user's locale.
        env: { ...env, LC_ALL: 'C.UTF-8' },
        timeoutMs: request.timeoutMs + slack,
        signal,
        stopWhen: (out) => backend.parseWhereAmI(out) !== undefined,
      }),
      'location.get',
    );
    const out = result.stdout.toString('utf8');
    const fix = backend.parseWhereAmI(out, !result.stopped);
    if (fix) return fix;
    const failure = backend.classifyWhereAmIFailure(out, result.stderr);
    // where-am-i exits 0 at its own timeout without a fix; a crash or a refusal says why on stderr.
    if (failure.code === 'UNAVAILABLE' && result.exitCode === 0) throw locationError({ code: 'TIMEOUT', detail: `No location within ${request.timeoutMs} ms.` });
    throw locationError(failure);
  }
  const windows = locator.backend === 'windows';
  const result = checkRun(
    await runTool({
      file: locator.file,
      args: windows ? powershellArgs(backend.WINDOWS_LOCATION_SCRIPT) : backend.coreLocationArgs(),
      env: windows ? { ...env, CAPNODE_LOCATION_TIMEOUT_MS: String(request.timeoutMs), CAPNODE_LOCATION_ACCURACY: request.desiredAccuracy } : env,
      timeoutMs: request.timeoutMs + slack,
      signal,
    }),
    'location.get',
  );
  const parsed = windows ? backend.parseWindowsLocation(result.stdout.toString('utf8')) : backend.parseCoreLocation(`${result.stdout.toString('utf8')}\n${result.stderr}`);
  if (parsed === undefined) throw locationError({ code: 'UNAVAILABLE', detail: 'The location service gave no readable fix.' });
  if (backend.isLocationFailure(parsed)) throw locationError(parsed);
  return parsed;
}

const ACCURACY_RANK: Readonly<Record<DesiredAccuracy, number>> = { coarse: 0, balanced: 1, precise: 2 };

/**
 * `location.get` in OpenClaw's shape (`{ lat, lon, accuracyMeters, …, timestamp, isPrecise, source }`),
 * from GeoClue (Linux), CoreLocation through CoreLocationCLI (macOS) or System.Device.Location
 * (Windows). Failures carry OpenClaw's code (LOCATION_DISABLED, PERMISSION_REQUIRED, TIMEOUT,
 * UNAVAILABLE) in `data.code`. Needs `location` consent.
 */
export function createLocationCapability(options: LocationOptions = {}): Capability {
  let last: { fix: LocationFix; accuracy: DesiredAccuracy; atMs: number; backend: string } | undefined;
  return defineCapability({
    category: 'location',
    commands: [
      defineCommand({
        name: 'location.get',
        description: "This machine's location (latitude, longitude, accuracy) from the platform's location service.",
        annotations: { title: 'Get location', readOnly: true },
        input: getInput,
        consent: 'location',
        availability: () => probeLocation(options),
        async execute(request, ctx) {
          const now = Date.now();
          let result: Record<string, unknown>;
          if (last && request.maxAgeMs > 0 && now - last.atMs <= request.maxAgeMs && ACCURACY_RANK[last.accuracy] >= ACCURACY_RANK[request.desiredAccuracy]) {
            result = { ...toLocationResult(last.fix, last.backend, last.atMs), cached: true };
          } else {
            const locator = await findLocator(options);
            if (!locator) throw locationError({ code: 'UNAVAILABLE', detail: `unavailable here: install ${INSTALL[platformOf(options)] ?? INSTALL.linux}` });
            const fix = await locate(locator, request, options, ctx.signal);
            last = { fix, accuracy: request.desiredAccuracy, atMs: Date.now(), backend: locator.backend };
            result = toLocationResult(fix, locator.backend, last.atMs);
          }
          return { ok: true, content: [{ type: 'text', text: JSON.stringify(result, null, 2) }], structured: result };
        },
      }),
    ],
  });
}

/** Reads `pluginSettings.location` (`whereAmI`: a where-am-i program, for tests). */
export function locationOptionsFromSettings(settings: PluginContext['settings']): LocationOptions {
  return typeof settings.whereAmI === 'string' && settings.whereAmI ? { whereAmI: settings.whereAmI } : {};
}

/** The location plugin of the pack. */
export const locationPlugin = definePlugin((context: PluginContext) => createLocationCapability(locationOptionsFromSettings(context.settings)));
