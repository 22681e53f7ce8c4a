import { describe, expect, it } from 'vitest';
import { locationSource, toLocationResult } from './location.js';
import { classifyWhereAmIFailure, coreLocationArgs, geoclueAccuracyLevel, parseCoreLocation, parseWhereAmI, parseWindowsLocation, whereAmIArgs, WINDOWS_LOCATION_SCRIPT } from './locationBackend.js';

const BLOCK = `Client object: /org/freedesktop/GeoClue2/Client/1

New location:
Latitude:    52.520008°
Longitude:   13.404954°
Accuracy:    25.000000 meters
Altitude:    34.000000 meters
Description: GPS
Timestamp:   Tue 01 Dec 2026 11:00:00 AM UTC (1796122800 seconds since the Epoch)
`;

describe('GeoClue where-am-i', () => {
  it('passes timeout in whole seconds and the accuracy level', () => {
    expect(whereAmIArgs({ timeoutMs: 1500, accuracy: 'coarse' })).toEqual(['-t', '2', '-a', '4']);
    expect(whereAmIArgs({ timeoutMs: 10, accuracy: 'precise' })).toEqual(['-t', '1', '-a', '8']);
    expect(geoclueAccuracyLevel('balanced')).toBe(6);
  });

  it('parses the first complete block, and waits for one that is not complete yet', () => {
    expect(parseWhereAmI(BLOCK)).toEqual({ lat: 52.520008, lon: 13.404954, accuracyMeters: 25, altitudeMeters: 34, timestampMs: 1796122800000, description: 'GPS' });
    const partial = BLOCK.slice(0, BLOCK.indexOf('Timestamp'));
    expect(parseWhereAmI(partial)).toBeUndefined();
    expect(parseWhereAmI(partial, true)).toMatchObject({ lat: 52.520008 });
    expect(parseWhereAmI(`${BLOCK}\nNew location:\nLatitude:    1.000000°\n`)).toMatchObject({ lat: 52.520008 });
    expect(parseWhereAmI('Client object: /x\n')).toBeUndefined();
  });

  it('reads decimal commas and the C locale’s mangled degree sign', () => {
    const comma = BLOCK.replace('52.520008°', '52,520008?').replace('13.404954°', '13,404954?');
    expect(parseWhereAmI(comma)).toMatchObject({ lat: 52.520008, lon: 13.404954 });
    expect(parseWhereAmI(BLOCK.replace('52.520008', '95.0'))).toBeUndefined();
  });

  it('classifies failures into OpenClaw codes', () => {
    expect(classifyWhereAmIFailure('Geolocation disabled. Quitting..\n', '').code).toBe('LOCATION_DISABLED');
    expect(classifyWhereAmIFailure('', "Failed to connect to GeoClue2 service: GDBus.Error:org.freedesktop.DBus.Error.AccessDenied: 'x' disallowed, no agent for UID 1000").code).toBe('PERMISSION_REQUIRED');
    expect(classifyWhereAmIFailure('', 'Failed to connect to GeoClue2 service: GDBus.Error:org.freedesktop.DBus.Error.ServiceUnknown').code).toBe('UNAVAILABLE');
  });
});

describe('macOS CoreLocationCLI', () => {
  it('asks for one fix in a tab-separated format without reverse geocoding, and parses it', () => {
    expect(coreLocationArgs()).toEqual(['--format', 'CAPNODE\t%latitude\t%longitude\t%altitude\t%direction\t%speed\t%h_accuracy\t%v_accuracy\t%time']);
    const fix = parseCoreLocation('CAPNODE\t37.331705\t-122.030237\t10.00\t-1.0\t-1\t65\t-1\t2026-12-01 11:00:00 +0000\n');
    expect(fix).toEqual({ lat: 37.331705, lon: -122.030237, accuracyMeters: 65, timestampMs: Date.parse('2026-12-01T11:00:00Z'), description: 'CoreLocation' });
    expect(parseCoreLocation('CAPNODE\t1\t2\t30.50\t90.0\t3\t5\t8\t2026-12-01 11:00:00 +0000')).toMatchObject({ altitudeMeters: 30.5, headingDeg: 90, speedMps: 3 });
    expect(parseCoreLocation('CoreLocationCLI: ❌ Location services are disabled or location access denied. Please visit System Settings > Privacy & Security > Location Services')).toMatchObject({ code: 'PERMISSION_REQUIRED' });
    expect(parseCoreLocation('Fetching location timed out. Exiting.')).toMatchObject({ code: 'TIMEOUT' });
    expect(parseCoreLocation('garbage')).toBeUndefined();
  });
});

describe('Windows System.Device.Location', () => {
  it('prints one JSON line that is parsed into a fix or a code', () => {
    expect(WINDOWS_LOCATION_SCRIPT).toContain('$env:CAPNODE_LOCATION_TIMEOUT_MS');
    expect(parseWindowsLocation('{"lat":47.6,"lon":-122.3,"accuracy":30,"altitude":"NaN","speed":"NaN","course":"NaN","time":"2026-12-01T11:00:00.0000000Z"}\r\n')).toEqual({
      lat: 47.6,
      lon: -122.3,
      accuracyMeters: 30,
      timestampMs: Date.parse('2026-12-01T11:00:00Z'),
      description: 'Windows.Devices.Geolocation',
    });
    expect(parseWindowsLocation('{"error":"PERMISSION_REQUIRED"}')).toMatchObject({ code: 'PERMISSION_REQUIRED' });
    expect(parseWindowsLocation('{"error":"LOCATION_DISABLED"}')).toMatchObject({ code: 'LOCATION_DISABLED' });
    expect(parseWindowsLocation('{"error":"TIMEOUT"}')).toMatchObject({ code: 'TIMEOUT' });
  });
});

describe('OpenClaw result shape', () => {
  it('names the source and marks precise fixes', () => {
    expect(['GPS', 'WiFi', '3G', 'GeoIP', undefined, 'Something'].map((d) => locationSource(d, 'geoclue'))).toEqual(['gps', 'wifi', 'cell', 'ip', 'geoclue', 'geoclue']);
    expect(toLocationResult({ lat: 1, lon: 2, accuracyMeters: 5000 }, 'windows', Date.parse('2026-12-01T00:00:00Z'))).toEqual({
      lat: 1,
      lon: 2,
      accuracyMeters: 5000,
      timestamp: '2026-12-01T00:00:00.000Z',
      isPrecise: false,
      source: 'windows',
    });
  });
});
