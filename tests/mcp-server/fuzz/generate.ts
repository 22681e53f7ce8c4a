// Deterministic generator of malformed JSON-RPC bodies for the fuzz run (tests/mcp-server/fuzz.test.ts).

/** A seeded PRNG (mulberry32): the same seed gives the same bodies on every machine. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FuzzCase {
  /** Which generator made it (printed when a case fails). */
  readonly kind: string;
  readonly body: Buffer;
  /** Extra request headers (HTTP only). */
  readonly headers: Readonly<Record<string, string>>;
}

export const REVISION = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': REVISION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'fuzz', version: '1' },
};
export const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__defineGetter__', 'propertyIsEnumerable'];
/** Tools that answer at once (never fixture.slow: valid arguments could make it wait for minutes). */
const TOOL_NAMES = ['fixture.echo', 'fixture.fail', 'fixture.deny', 'fixture.throw', 'fixture.whoami', 'fixture.image', 'fixture.log', 'no.such.tool', 'FIXTURE.ECHO', ...PROTOTYPE_NAMES];
const METHODS = [
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'prompts/list',
  'logging/setLevel',
  'server/discover',
  'notifications/initialized',
  'notifications/cancelled',
  'completion/complete',
  '',
  'rpc.discover',
  ...PROTOTYPE_NAMES,
];
const HUGE_NUMBERS = ['1e400', '-1e400', '123456789012345678901234567890', '1E+999999', '-0', '0.0000000000000000000000000001', '9007199254740993', '1.7976931348623157e309', '-9223372036854775809'];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function createFuzzer(seed: number) {
  const random = createRandom(seed);
  const int = (max: number): number => Math.floor(random() * max);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  const chance = (p: number): boolean => random() < p;

  const scalar = (): Json =>
    pick<() => Json>([
      () => null,
      () => true,
      () => false,
      () => 0,
      () => -1,
      () => 1.5,
      () => Number.MAX_VALUE,
      () => -Number.MAX_SAFE_INTEGER - 2,
      () => '',
      () => 'x',
      () => pick(PROTOTYPE_NAMES),
      () => pick(METHODS),
      () => '\u0000\u202e\u200b\t\n',
      () => '\ud800',
      () => 'y'.repeat(int(5000)),
    ])();
  const value = (depth = 0): Json => {
    if (depth > 3 || chance(0.5)) return scalar();
    if (chance(0.5)) return Array.from({ length: int(4) }, () => value(depth + 1));
    const object: { [key: string]: Json } = {};
    for (let i = int(4); i > 0; i -= 1) object[chance(0.3) ? pick(PROTOTYPE_NAMES) : pick(['a', 'name', 'arguments', '_meta', 'id', 'method', 'text'])] = value(depth + 1);
    return object;
  };

  const template = (): { [key: string]: Json } => {
    const id: Json = chance(0.5) ? int(1000) : `f-${int(1000)}`;
    const modern = chance(0.25);
    const meta = (extra: { [key: string]: Json } = {}): { [key: string]: Json } => (modern ? { ...ENVELOPE, ...extra } : extra);
    switch (int(8)) {
      case 0:
        return { jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion: pick(['2025-06-18', '2024-11-05', REVISION, 'nope']), capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } };
      case 1:
        return { jsonrpc: '2.0', id, method: pick(['ping', 'tools/list', 'resources/list', 'prompts/list', 'server/discover']), params: { _meta: meta() } };
      case 2:
      case 3:
        return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: pick(TOOL_NAMES), arguments: chance(0.5) ? { text: 'fuzz' } : (value() as Json), _meta: meta({ progressToken: id }) } };
      case 4:
        return { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: chance(0.5) ? id : value(), reason: value() } };
      case 5:
        return { jsonrpc: '2.0', id, method: 'logging/setLevel', params: { level: pick(['debug', 'info', 'nope']), _meta: meta() } };
      case 6:
        return { jsonrpc: '2.0', method: pick(['notifications/initialized', 'notifications/progress', ...PROTOTYPE_NAMES]) };
      default:
        return { jsonrpc: '2.0', id, method: pick(METHODS), ...(chance(0.5) ? { params: { _meta: meta() } } : {}) };
    }
  };

  /** Replaces one field (top level or inside params / arguments / _meta) with a value of another type. */
  const wrongType = (): string => {
    const message = template();
    const params = message.params;
    const targets: Array<[{ [key: string]: Json }, string]> = [[message, 'jsonrpc'], [message, 'id'], [message, 'method'], [message, 'params']];
    if (params !== null && typeof params === 'object' && !Array.isArray(params)) {
      for (const key of ['name', 'arguments', '_meta', 'protocolVersion', 'capabilities', 'clientInfo', 'requestId', 'level']) targets.push([params, key]);
      const meta = params._meta;
      if (meta !== null && typeof meta === 'object' && !Array.isArray(meta)) for (const key of Object.keys(meta)) targets.push([meta, key]);
    }
    for (let i = 1 + int(2); i > 0; i -= 1) {
      const [owner, key] = pick(targets);
      if (chance(0.15)) delete owner[key];
      else owner[key] = value();
    }
    if (chance(0.1)) message[pick(['extra', 'result', 'error', ...PROTOTYPE_NAMES])] = value();
    return JSON.stringify(message);
  };

  const deep = (levels: number, inner = '1'): string => {
    const object = chance(0.5);
    return object ? `${'{"a":'.repeat(levels)}${inner}${'}'.repeat(levels)}` : `${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;
  };

  const deepNesting = (): string => {
    const levels = pick([65, 200, 1000, 10_000, 100_000]);
    const text = JSON.stringify(template());
    const where = int(5);
    let body: string;
    if (where === 0) body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${pick(TOOL_NAMES)}","arguments":{"x":${deep(levels)}}}}`;
    else if (where === 1) body = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fixture.log","arguments":{},"_meta":${deep(levels)}}}`;
    else if (where === 2) body = `{"jsonrpc":"2.0","id":${deep(levels)},"method":"ping"}`;
    else if (where === 3) body = `{"jsonrpc":"2.0","id":3,"method":"${pick(METHODS)}","params":${deep(levels)}}`;
    else body = deep(levels, text);
    return chance(0.15) ? body.slice(0, int(body.length)) : body;
  };

  const prototypeKeys = (): string => {
    const name = pick(PROTOTYPE_NAMES);
    return pick([
      `{"jsonrpc":"2.0","id":1,"method":"${name}"}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":{}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fixture.echo","arguments":{"__proto__":{"text":"polluted"},"constructor":{"prototype":{"polluted":true}}}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"__proto__":{"name":"fixture.echo"},"arguments":{"text":"x"}}}`,
      `{"__proto__":{"jsonrpc":"2.0","id":1,"method":"ping"}}`,
      `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"__proto__":{"progressToken":1}}}}`,
      `{"jsonrpc":"2.0","id":{"__proto__":null},"method":"ping"}`,
      `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"__proto__","__proto__":{"requestId":1}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"__proto__":{"x":1}},"clientInfo":{"name":"${name}","version":"1","__proto__":{}}}}`,
      `[{"jsonrpc":"2.0","id":"${name}","method":"${name}"},{"jsonrpc":"2.0","method":"${name}"}]`,
    ]);
  };

  const hugeNumber = (): string => {
    const number = pick(HUGE_NUMBERS);
    return pick([
      `{"jsonrpc":"2.0","id":${number},"method":"ping"}`,
      `{"jsonrpc":"2.0","id":${number},"method":"tools/call","params":{"name":"fixture.echo","arguments":{"text":${number}},"_meta":{"progressToken":${number}}}}`,
      `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${number}}}`,
      `{"jsonrpc":${number},"id":1,"method":"ping"}`,
      `[${number}]`,
      number,
    ]);
  };

  const batch = (): string => {
    const size = pick([0, 1, 2, 5, 20, 101, 150]);
    const items = Array.from({ length: size }, () => (chance(0.5) ? JSON.stringify(template()) : chance(0.5) ? wrongType() : JSON.stringify(value())));
    if (chance(0.2)) items.push(`[${items.slice(0, 3).join(',')}]`);
    return `[${items.join(',')}]`;
  };

  const invalidUtf8 = (): Buffer => {
    const text = Buffer.from(JSON.stringify(template()));
    const at = int(text.length);
    const bad = pick([[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82], [0xc0, 0xaf]]);
    return Buffer.concat([text.subarray(0, at), Buffer.from(bad), text.subarray(at)]);
  };

  const randomBytes = (): Buffer => {
    const bytes = Buffer.alloc(int(300));
    for (let i = 0; i < bytes.length; i += 1) bytes[i] = chance(0.3) ? pick([0x7b, 0x7d, 0x5b, 0x5d, 0x22, 0x3a, 0x2c, 0x5c]) : int(256);
    return bytes;
  };

  const truncated = (): string => {
    const text = JSON.stringify(chance(0.8) ? template() : [template(), template()]);
    return text.slice(0, int(text.length));
  };

  const headers = (): Record<string, string> => {
    if (!chance(0.25)) return {};
    const result: Record<string, string> = {};
    if (chance(0.8)) result['mcp-protocol-version'] = pick([REVISION, '2025-06-18', '2025-11-25', 'garbage', ' ', '2099-01-01', 'constructor']);
    if (chance(0.6)) result['mcp-method'] = pick(METHODS.filter(Boolean));
    if (chance(0.4)) result['mcp-name'] = pick([...TOOL_NAMES, '=?base64?Zml4dHVyZS5lY2hv?=', '=?base64?!!!?=', '']);
    if (chance(0.1)) result.accept = 'application/json, text/event-stream';
    return result;
  };

  const makers: Array<[string, number, () => string | Buffer]> = [
    ['random bytes', 10, randomBytes],
    ['truncated JSON', 15, truncated],
    ['wrong types', 30, wrongType],
    ['huge numbers', 8, hugeNumber],
    ['deep nesting', 5, deepNesting],
    ['prototype keys', 12, prototypeKeys],
    ['batch', 10, batch],
    ['invalid UTF-8', 10, invalidUtf8],
  ];
  const total = makers.reduce((sum, [, weight]) => sum + weight, 0);

  return (): FuzzCase => {
    let roll = random() * total;
    for (const [kind, weight, make] of makers) {
      roll -= weight;
      if (roll < 0) {
        const made = make();
        return { kind, body: Buffer.isBuffer(made) ? made : Buffer.from(made, 'utf8'), headers: headers() };
      }
    }
    throw new Error('unreachable');
  };
}
