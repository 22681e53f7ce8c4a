/** OpenClaw's `location.get` failure codes. */
export type LocationErrorCode = 'LOCATION_DISABLED' | 'PERMISSION_REQUIRED' | 'TIMEOUT' | 'UNAVAILABLE';

export type DesiredAccuracy = 'coarse' | 'balanced' | 'precise';

/** A fix as a backend reports it, before it becomes OpenClaw's result shape. */
export interface LocationFix {
  readonly lat: number;
  readonly lon: number;
  readonly accuracyMeters: number;
  readonly altitudeMeters?: number;
  readonly speedMps?: number;
  readonly headingDeg?: number;
  /** Milliseconds since the epoch. */
  readonly timestampMs?: number;
  /** What the backend says produced it (GeoClue's description: `GeoIP`, `WiFi`, `GPS` …). */
  readonly description?: string;
}

/** A backend's failure, with OpenClaw's code. */
export interface LocationFailure {
  readonly code: LocationErrorCode;
  readonly detail: string;
}

/** GeoClue accuracy levels for `where-am-i -a`: city (4), street (6), exact (8). */
export function geoclueAccuracyLevel(accuracy: DesiredAccuracy): number {
  return accuracy === 'coarse' ? 4 : accuracy === 'balanced' ? 6 : 8;
}

/** `where-am-i` arguments: whole seconds of timeout (at least 1), accuracy level. */
export function whereAmIArgs(options: { readonly timeoutMs: number; readonly accuracy: DesiredAccuracy }): string[] {
  return ['-t', String(Math.max(1, Math.ceil(options.timeoutMs / 1000))), '-a', String(geoclueAccuracyLevel(options.accuracy))];
}

function number(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  // Locales with a decimal comma print "51,507400".
  const value = Number(text.replace(',', '.'));
  return Number.isFinite(value) ? value : undefined;
}

function field(block: string, name: string): string | undefined {
  return new RegExp(`^${name}:\\s*(.+?)\\s*$`, 'm').exec(block)?.[1];
}

function leadingNumber(text: string | undefined): number | undefined {
  return number(/^(-?\d+(?:[.,]\d+)?)/.exec(text ?? '')?.[1]);
}

/**
 * Parses the first complete "New location:" block of GeoClue's `where-am-i` output (Latitude,
 * Longitude, Accuracy, and when known Altitude, Speed, Heading, Description, Timestamp with its
 * "(N seconds since the Epoch)"). `undefined` while no block is complete.
 *
 * @param finished the program has exited: a block without a Timestamp line counts as complete.
 */
export function parseWhereAmI(output: string, finished = false): LocationFix | undefined {
  const start = output.indexOf('New location:');
  if (start < 0) return undefined;
  const rest = output.slice(start + 'New location:'.length);
  const next = rest.indexOf('New location:');
  const block = next >= 0 ? rest.slice(0, next) : rest;
  const complete = next >= 0 || finished || /^Timestamp:.*\n/m.test(block);
  if (!complete) return undefined;
  const lat = leadingNumber(field(block, 'Latitude'));
  const lon = leadingNumber(field(block, 'Longitude'));
  const accuracy = leadingNumber(field(block, 'Accuracy'));
  if (lat === undefined || lon === undefined || accuracy === undefined) return undefined;
  if (Math.abs(lat) > 90 || Math.abs(lon) > 180) return undefined;
  const altitude = leadingNumber(field(block, 'Altitude'));
  const speed = leadingNumber(field(block, 'Speed'));
  const heading = leadingNumber(field(block, 'Heading'));
  const description = field(block, 'Description');
  const epoch = /\((\d+) seconds since the Epoch\)/.exec(field(block, 'Timestamp') ?? '')?.[1];
  return {
    lat,
    lon,
    accuracyMeters: accuracy,
    ...(altitude !== undefined ? { altitudeMeters: altitude } : {}),
    ...(speed !== undefined ? { speedMps: speed } : {}),
    ...(heading !== undefined ? { headingDeg: heading } : {}),
    ...(epoch !== undefined ? { timestampMs: Number(epoch) * 1000 } : {}),
    ...(description ? { description } : {}),
  };
}

/** GeoClue's failures in `where-am-i`'s output, as OpenClaw's codes. */
export function classifyWhereAmIFailure(stdout: string, stderr: string): LocationFailure {
  const text = `${stdout}\n${stderr}`;
  if (/Geolocation disabled/i.test(text)) return { code: 'LOCATION_DISABLED', detail: 'Location services are turned off (GeoClue: geolocation disabled).' };
  if (/AccessDenied|disallowed|not allowed|permission/i.test(text)) return { code: 'PERMISSION_REQUIRED', detail: 'GeoClue refused this application location access (no agent allowed it).' };
  if (/ServiceUnknown|was not provided by any \.service|Failed to connect to GeoClue2/i.test(text)) return { code: 'UNAVAILABLE', detail: 'The GeoClue service is not running.' };
  return { code: 'UNAVAILABLE', detail: `GeoClue gave no location${stderr.trim() ? `: ${stderr.trim().split('\n')[0]!.slice(0, 200)}` : '.'}` };
}

/** Fields CoreLocationCLI prints, tab-separated (no placemark fields: those need a reverse-geocoding network lookup). */
const CORELOCATION_FIELDS = ['latitude', 'longitude', 'altitude', 'direction', 'speed', 'h_accuracy', 'v_accuracy', 'time'] as const;

/** CoreLocationCLI arguments: one fix (its default), printed in a tab-separated `--format`. */
export function coreLocationArgs(): string[] {
  return ['--format', `CAPNODE\t${CORELOCATION_FIELDS.map((field) => `%${field}`).join('\t')}`];
}

/**
 * Parses CoreLocationCLI's output for {@link coreLocationArgs}: the `CAPNODE` line of fields, or its
 * failure lines ("❌ Location services are disabled or location access denied", "timed out").
 * Negative accuracy, course or speed mean unknown.
 */
export function parseCoreLocation(output: string): LocationFix | LocationFailure | undefined {
  const line = output.split('\n').find((candidate) => candidate.startsWith('CAPNODE\t'));
  if (!line) {
    if (/access denied|not authorized|denied/i.test(output)) return { code: 'PERMISSION_REQUIRED', detail: 'macOS refused location access (System Settings › Privacy & Security › Location Services).' };
    if (/disabled/i.test(output)) return { code: 'LOCATION_DISABLED', detail: 'Location Services are turned off.' };
    if (/timed out/i.test(output)) return { code: 'TIMEOUT', detail: 'CoreLocation gave no location in time.' };
    return undefined;
  }
  const values = line.split('\t').slice(1);
  const get = (field: (typeof CORELOCATION_FIELDS)[number]) => number(values[CORELOCATION_FIELDS.indexOf(field)]?.trim());
  const lat = get('latitude');
  const lon = get('longitude');
  if (lat === undefined || lon === undefined) return undefined;
  const accuracy = get('h_accuracy');
  const altitude = get('altitude');
  const vAccuracy = get('v_accuracy');
  const speed = get('speed');
  const heading = get('direction');
  const time = Date.parse(values[CORELOCATION_FIELDS.indexOf('time')]?.trim() ?? '');
  return {
    lat,
    lon,
    accuracyMeters: accuracy !== undefined && accuracy >= 0 ? accuracy : 0,
    ...(altitude !== undefined && vAccuracy !== undefined && vAccuracy >= 0 ? { altitudeMeters: altitude } : {}),
    ...(speed !== undefined && speed >= 0 ? { speedMps: speed } : {}),
    ...(heading !== undefined && heading >= 0 ? { headingDeg: heading } : {}),
    ...(Number.isFinite(time) ? { timestampMs: time } : {}),
    description: 'CoreLocation',
  };
}

/** PowerShell (System.Device.Location) printing one JSON line: a fix, or `{ error: <code> }`. Timeout and accuracy come from the environment. */
export const WINDOWS_LOCATION_SCRIPT = `$ErrorActionPreference = 'Stop'
Add-Type -AssemblyName System.Device
$accuracy = if ($env:CAPNODE_LOCATION_ACCURACY -eq 'precise') { [System.Device.Location.GeoPositionAccuracy]::High } else { [System.Device.Location.GeoPositionAccuracy]::Default }
$w = New-Object System.Device.Location.GeoCoordinateWatcher($accuracy)
$started = $w.TryStart($false, [TimeSpan]::FromMilliseconds([int]$env:CAPNODE_LOCATION_TIMEOUT_MS))
if ($w.Permission -eq 'Denied') { Write-Output '{"error":"PERMISSION_REQUIRED"}'; exit 0 }
if ($w.Status -eq 'Disabled') { Write-Output '{"error":"LOCATION_DISABLED"}'; exit 0 }
$deadline = (Get-Date).AddMilliseconds([int]$env:CAPNODE_LOCATION_TIMEOUT_MS)
while ($w.Position.Location.IsUnknown -and (Get-Date) -lt $deadline) { Start-Sleep -Milliseconds 100 }
if (-not $started -or $w.Position.Location.IsUnknown) { Write-Output '{"error":"TIMEOUT"}'; exit 0 }
$l = $w.Position.Location
[pscustomobject]@{ lat = $l.Latitude; lon = $l.Longitude; accuracy = $l.HorizontalAccuracy; altitude = $l.Altitude; speed = $l.Speed; course = $l.Course; time = $w.Position.Timestamp.ToUniversalTime().ToString('o') } | ConvertTo-Json -Compress
$w.Stop()
`;

/** Parses {@link WINDOWS_LOCATION_SCRIPT}'s line (NaN fields are absent: ConvertTo-Json writes them as "NaN" strings). */
export function parseWindowsLocation(output: string): LocationFix | LocationFailure | undefined {
  const line = output.split('\n').find((candidate) => candidate.trim().startsWith('{'));
  if (!line) return undefined;
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (data.error === 'PERMISSION_REQUIRED') return { code: 'PERMISSION_REQUIRED', detail: 'Windows refused location access (Settings › Privacy › Location).' };
  if (data.error === 'LOCATION_DISABLED') return { code: 'LOCATION_DISABLED', detail: 'Location services are turned off.' };
  if (data.error === 'TIMEOUT') return { code: 'TIMEOUT', detail: 'Windows gave no location in time.' };
  const get = (key: string) => (typeof data[key] === 'number' && Number.isFinite(data[key]) ? (data[key] as number) : undefined);
  const lat = get('lat');
  const lon = get('lon');
  if (lat === undefined || lon === undefined) return undefined;
  const time = typeof data.time === 'string' ? Date.parse(data.time) : Number.NaN;
  const accuracy = get('accuracy');
  const altitude = get('altitude');
  const speed = get('speed');
  const course = get('course');
  return {
    lat,
    lon,
    accuracyMeters: accuracy ?? 0,
    ...(altitude !== undefined ? { altitudeMeters: altitude } : {}),
    ...(speed !== undefined ? { speedMps: speed } : {}),
    ...(course !== undefined ? { headingDeg: course } : {}),
    ...(Number.isFinite(time) ? { timestampMs: time } : {}),
    description: 'Windows.Devices.Geolocation',
  };
}

export function isLocationFailure(value: LocationFix | LocationFailure | undefined): value is LocationFailure {
  return value !== undefined && 'code' in value;
}
