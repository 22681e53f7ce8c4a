import { describe, expect, it } from 'vitest';
import { flagValues, parseArgs, portFlag } from './args.js';
import { CliError } from './errors.js';
import { parseParams } from './commands/tools.js';
import { closeNames } from './suggest.js';

const spec = { json: 'switch', url: 'value', command: 'value', params: 'value', help: 'switch', port: 'value' } as const;

function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    return (error as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('parseArgs', () => {
  it('reads switches, values, inline values, short aliases and --', () => {
    const parsed = parseArgs(['serve', '--json', '--url=http://x/', '-c', 'a.b', '--params', '{"a":1}', '--', '--not-a-flag'], spec);
    expect(parsed.positionals).toEqual(['serve', '--not-a-flag']);
    expect(Object.fromEntries(parsed.flags)).toEqual({ json: true, url: 'http://x/', command: 'a.b', params: '{"a":1}' });
  });

  it('keeps every value of a repeated flag and the arguments after -- verbatim', () => {
    const parsed = parseArgs(['servers', 'add', 'x', '--url', 'http://a/', '--url=http://b/', '--command', '-y', '--', '--json', 'b'], spec);
    expect(flagValues(parsed, 'url')).toEqual(['http://a/', 'http://b/']);
    expect(parsed.flags.get('url')).toBe('http://b/');
    expect(parsed.flags.get('command')).toBe('-y');
    expect(flagValues(parsed, 'json')).toEqual([]);
    expect(parsed.rest).toEqual(['--json', 'b']);
    expect(parsed.positionals).toEqual(['servers', 'add', 'x', '--json', 'b']);
  });

  it('rejects unknown flags with a suggestion and missing values', () => {
    expect(usageError(() => parseArgs(['--jsn'], spec))).toMatch(/unknown option --jsn \(did you mean --json\?\)/);
    expect(usageError(() => parseArgs(['--url'], spec))).toMatch(/--url needs a value/);
    expect(usageError(() => parseArgs(['--json=1'], spec))).toMatch(/takes no value/);
    expect(usageError(() => parseArgs(['-x'], spec))).toMatch(/unknown option -x/);
  });

  it('validates ports', () => {
    expect(portFlag(parseArgs(['--port', '0'], spec))).toBe(0);
    expect(usageError(() => portFlag(parseArgs(['--port', '70000'], spec)))).toMatch(/port number/);
    expect(usageError(() => portFlag(parseArgs(['--port', 'abc'], spec)))).toMatch(/port number/);
  });
});

describe('parseParams', () => {
  it('accepts objects and nothing', () => {
    expect(parseParams(undefined)).toEqual({});
    expect(parseParams('{"a":[1]}')).toEqual({ a: [1] });
  });

  it('points at the position of a syntax error', () => {
    const message = usageError(() => parseParams('{"a":1,}'));
    expect(message).toMatch(/--params is not valid JSON: .*position 7/);
    expect(message).toContain('\n  {"a":1,}\n         ^');
    expect(usageError(() => parseParams('[1]'))).toMatch(/must be a JSON object.*an array/);
    expect(usageError(() => parseParams('3'))).toMatch(/a number/);
  });
});

describe('closeNames', () => {
  it('suggests near names, best first', () => {
    const names = ['system.run', 'system.which', 'system.notify', 'device.info', 'device.status'];
    expect(closeNames('sytem.run', names)[0]).toBe('system.run');
    expect(closeNames('device', names)).toEqual(['device.info', 'device.status']);
    expect(closeNames('zzzzzz', names)).toEqual([]);
  });
});
