import { expect, test } from 'vitest';
import type { CallElicitor } from '../types.js';
import { CallsInFlight } from './callsInFlight.js';

test('a server question goes to the one call in flight that can take it; with two (even the same elicitor) to none', async () => {
  const calls = new CallsInFlight();
  const elicit: CallElicitor = async () => ({ action: 'accept', content: { ok: true } });
  expect(calls.elicitor()).toBeUndefined();
  const endPlain = calls.begin();
  const endFirst = calls.begin(elicit);
  expect(await calls.elicitor()?.({ message: 'q', requestedSchema: { type: 'object', properties: {} } } as never, {} as never)).toEqual({ action: 'accept', content: { ok: true } });
  const endSecond = calls.begin(elicit);
  expect(calls.elicitor()).toBeUndefined();
  endSecond();
  endSecond();
  expect(calls.elicitor()).toBeDefined();
  endFirst();
  endPlain();
  expect(calls.elicitor()).toBeUndefined();
});
