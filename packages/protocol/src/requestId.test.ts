import { describe, expect, it } from 'vitest';
import { isProtocolFormatError } from './errors.js';
import {
  extractRequestIdRaw,
  findRequestIdToken,
  isRequestId,
  needsRawNumber,
  requestIdKey,
  requestIdKeyFromMessage,
  type RequestIdLocation,
} from './requestId.js';

/** Keys an id the way a server does: parse, then key from the parsed value and the text. */
function keyOf(text: string, location: RequestIdLocation = 'id') {
  const message = JSON.parse(text) as { id?: unknown; params?: { requestId?: unknown } };
  const id = location === 'id' ? message.id : message.params?.requestId;
  if (!isRequestId(id)) throw new Error(`no id in ${text}`);
  return requestIdKeyFromMessage(id, text, location);
}

const request = (idLexeme: string) => `{"jsonrpc":"2.0","id":${idLexeme},"method":"tools/call","params":{"name":"x"}}`;
const cancelled = (idLexeme: string) =>
  `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${idLexeme},"reason":"user"}}`;

describe('requestIdKey identity', () => {
  it('keeps string and numeric ids distinct', () => {
    expect(requestIdKey('1')).not.toBe(requestIdKey(1));
    expect(keyOf(request('"1"'))).not.toBe(keyOf(request('1')));
    expect(keyOf(request('"1.0"'))).not.toBe(keyOf(request('1')));
  });

  it('matches escaped-equivalent string ids by their decoded value', () => {
    expect(keyOf(request('"\\u0061"'))).toBe(keyOf(request('"a"')));
    expect(keyOf(request('"\\u00e9t\\u00E9"'))).toBe(keyOf(request('"été"')));
    expect(keyOf(request('"a\\/b"'))).toBe(keyOf(request('"a/b"')));
    expect(keyOf(request('"\\ud83d\\ude00"'))).toBe(keyOf(request('"😀"')));
    expect(keyOf(request('"a"'))).not.toBe(keyOf(request('"A"')));
  });

  it('matches numeric ids by value', () => {
    const one = keyOf(request('1'));
    for (const spelling of ['1.0', '1e0', '1E0', '10E-1', '0.1e1', '100e-2', '1.000e+0']) {
      expect(keyOf(request(spelling)), spelling).toBe(one);
    }
    expect(keyOf(request('-0'))).toBe(keyOf(request('0')));
    expect(keyOf(request('0.0e-5'))).toBe(keyOf(request('0')));
    expect(keyOf(request('2'))).not.toBe(one);
    expect(keyOf(request('-1'))).not.toBe(one);
  });

  it('matches a request and its cancellation across spellings', () => {
    expect(keyOf(cancelled('10E-1'), 'params.requestId')).toBe(keyOf(request('1')));
    expect(keyOf(cancelled('"\\u0061"'), 'params.requestId')).toBe(keyOf(request('"a"')));
  });

  it('keys a 30-digit id exactly, apart from neighbours that share its double', () => {
    const big = '123456789012345678901234567890';
    const neighbour = '123456789012345678901234567891';
    expect((JSON.parse(request(big)) as { id: number }).id).toBe((JSON.parse(request(neighbour)) as { id: number }).id);

    expect(keyOf(request(big))).toBe(`n:${big}`);
    expect(keyOf(request(neighbour))).not.toBe(keyOf(request(big)));
    expect(keyOf(request('1.23456789012345678901234567890e29'))).toBe(keyOf(request(big)));
    expect(keyOf(cancelled(big), 'params.requestId')).toBe(keyOf(request(big)));
    expect(keyOf(cancelled(neighbour), 'params.requestId')).not.toBe(keyOf(request(big)));
  });

  it('keys fractional and huge ids exactly', () => {
    expect(keyOf(request('0.1'))).toBe('n:1e-1');
    expect(keyOf(request('0.10'))).toBe(keyOf(request('1e-1')));
    expect(keyOf(request('0.1000000000000000000001'))).not.toBe(keyOf(request('0.1')));
    expect(keyOf(request('1e400'))).toBe('n:1e400');
    expect(keyOf(request('-1e400'))).toBe('n:-1e400');
    expect(keyOf(request('1e400'))).not.toBe(keyOf(request('2e400')));
    expect(keyOf(request('9007199254740993'))).toBe('n:9007199254740993');
  });

  it('keys a parsed id without its text the same way when no text is needed', () => {
    expect(requestIdKeyFromMessage(42, '')).toBe(requestIdKey(42));
    expect(requestIdKeyFromMessage('x', '')).toBe('s:x');
    expect(requestIdKey(42)).toBe('n:42');
    expect(requestIdKey(-0)).toBe('n:0');
    expect(requestIdKey(1.5)).toBe('n:1.5e0');
    expect(requestIdKey(1e21)).toBe('n:1000000000000000000000');
  });

  it('falls back to the parsed value when the text has no lexeme for the id', () => {
    const batch = `[${request('123456789012345678901234567890')}]`;
    const id = 123456789012345678901234567890;
    expect(requestIdKeyFromMessage(id, batch)).toBe(requestIdKey(id));
    expect(requestIdKeyFromMessage(id, request('5'))).toBe(requestIdKey(id));
  });

  it('rejects what is not a request id with a clear error', () => {
    const expectCode = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        expect(isProtocolFormatError(error) && error.code).toBe('invalid_request_id');
        return;
      }
      throw new Error('did not throw');
    };
    expectCode(() => requestIdKey(Number.NaN));
    expectCode(() => requestIdKey(null as unknown as string));
    expectCode(() => requestIdKey({} as unknown as string));
    expectCode(() => requestIdKey('1', '1'));
    expectCode(() => requestIdKey(1, '2'));
    expectCode(() => requestIdKey(1, '01'));
    expectCode(() => requestIdKey(1, ' 1'));
    expectCode(() => requestIdKey(Number.POSITIVE_INFINITY));
    expect(() => requestIdKey(1, '2')).toThrow(/not the JSON spelling of request id 1/);
    expect(requestIdKey(Number.POSITIVE_INFINITY, '1e999')).toBe('n:1e999');
  });

  it('guards request ids and says when a raw lexeme is needed', () => {
    expect(isRequestId('x')).toBe(true);
    expect(isRequestId(0)).toBe(true);
    expect(isRequestId(1.5)).toBe(true);
    expect(isRequestId(Number.NaN)).toBe(false);
    expect(isRequestId(null)).toBe(false);
    expect(isRequestId(undefined)).toBe(false);
    expect(isRequestId(1n)).toBe(false);
    expect(needsRawNumber(1)).toBe(false);
    expect(needsRawNumber('123456789012345678901234567890')).toBe(false);
    expect(needsRawNumber(Number.MAX_SAFE_INTEGER)).toBe(false);
    expect(needsRawNumber(Number.MAX_SAFE_INTEGER + 1)).toBe(true);
    expect(needsRawNumber(0.5)).toBe(true);
    expect(needsRawNumber(Number.POSITIVE_INFINITY)).toBe(true);
  });
});

describe('extractRequestIdRaw / findRequestIdToken', () => {
  it('finds the top-level id lexeme wherever it sits', () => {
    expect(extractRequestIdRaw('{"id":123456789012345678901234567890}')).toBe('123456789012345678901234567890');
    expect(extractRequestIdRaw(' \r\n\t{ "jsonrpc" : "2.0" ,\n "id"\t:\t-1.5E+3 , "method":"m" } ')).toBe('-1.5E+3');
    expect(extractRequestIdRaw(request('7'))).toBe('7');
  });

  it('skips nested members, strings and escapes that look like an id', () => {
    const text =
      '{"params":{"id":1,"arguments":{"id":[2,{"id":3}],"s":"\\"id\\":4 } ] {"}},' +
      '"note":"\\\\","x":[{"a":"]}"},[]],"id":5,"method":"m"}';
    expect(extractRequestIdRaw(text)).toBe('5');
  });

  it('matches an escaped member name and takes the last duplicate, as JSON.parse does', () => {
    expect(extractRequestIdRaw('{"\\u0069d":12}')).toBe('12');
    expect(extractRequestIdRaw('{"id":1,"id":2}')).toBe('2');
    expect((JSON.parse('{"id":1,"id":2}') as { id: number }).id).toBe(2);
    expect(extractRequestIdRaw('{"idx":1,"i":2,"\\u0069":3}')).toBeUndefined();
  });

  it('finds params.requestId of a cancellation', () => {
    expect(extractRequestIdRaw(cancelled('123456789012345678901234567890'), 'params.requestId')).toBe(
      '123456789012345678901234567890',
    );
    expect(extractRequestIdRaw('{"params":{"requestId":1},"params":{"requestId":2}}', 'params.requestId')).toBe('2');
    expect(extractRequestIdRaw('{"requestId":1,"params":{}}', 'params.requestId')).toBeUndefined();
    expect(extractRequestIdRaw('{"params":[{"requestId":1}]}', 'params.requestId')).toBeUndefined();
  });

  it('reports the token kind and span, and yields no raw number for other kinds', () => {
    const text = '{"id":"a\\"b","method":"m"}';
    const span = findRequestIdToken(text);
    expect(span).toEqual({ start: 6, end: 12, kind: 'string' });
    expect(text.slice(span?.start, span?.end)).toBe('"a\\"b"');
    expect(extractRequestIdRaw(text)).toBeUndefined();
    expect(findRequestIdToken('{"id":null}')?.kind).toBe('null');
    expect(findRequestIdToken('{"id":true}')?.kind).toBe('boolean');
    expect(findRequestIdToken('{"id":{}}')?.kind).toBe('object');
    expect(findRequestIdToken('{"id":[]}')?.kind).toBe('array');
  });

  it('lets a server splice the exact id into its response', () => {
    const raw = '123456789012345678901234567890';
    const parsed = JSON.parse(request(raw)) as { id: number };
    const response = JSON.stringify({ jsonrpc: '2.0', id: parsed.id, result: { content: [] } });
    expect(response).not.toContain(raw);
    const span = findRequestIdToken(response);
    if (span === undefined) throw new Error('no id');
    const spliced = response.slice(0, span.start) + raw + response.slice(span.end);
    expect(spliced).toBe(`{"jsonrpc":"2.0","id":${raw},"result":{"content":[]}}`);
  });

  it('returns undefined, never throws, for texts it cannot follow', () => {
    for (const text of [
      '',
      '   ',
      '[{"id":1}]',
      '"id"',
      '42',
      '{',
      '{"id"',
      '{"id":',
      '{"id":1',
      '{"id" 1}',
      '{"id":1;}',
      '{"a":"unterminated',
      '{"a":[1,2,{"b":3}',
      '{id:1}',
      '{}',
      '{"a":1}',
      'garbage',
    ]) {
      expect(extractRequestIdRaw(text), text).toBeUndefined();
      expect(findRequestIdToken(text, 'params.requestId'), text).toBeUndefined();
    }
  });
});
