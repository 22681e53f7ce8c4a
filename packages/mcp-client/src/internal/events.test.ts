import { describe, expect, it } from 'vitest';
import type { McpRuntimeEvent } from '../types.js';
import { MAX_BUFFERED_EVENTS, RuntimeEvents } from './events.js';

const logger = { debug() {}, info() {}, warn() {}, error() {} };
const event = (n: number): McpRuntimeEvent => ({ type: 'diagnostic', server: 's', level: 'warning', message: String(n) });

describe('RuntimeEvents', () => {
  it('keeps at most MAX_BUFFERED_EVENTS unread events per iterator, dropping the oldest', async () => {
    const events = new RuntimeEvents(logger);
    const iterator = events.iterate();
    for (let n = 0; n < MAX_BUFFERED_EVENTS + 5; n += 1) events.emit(event(n));
    const first = await iterator.next();
    expect(first.value).toEqual(event(5));
    await iterator.return!();
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
  });

  it('unsubscribes, survives throwing listeners, and ends iterators on close', async () => {
    const errors: string[] = [];
    const events = new RuntimeEvents({ ...logger, error: (message) => void errors.push(message) });
    const seen: string[] = [];
    events.subscribe(() => {
      throw new Error('boom');
    });
    const off = events.subscribe((e) => seen.push((e as { message: string }).message));
    events.emit(event(1));
    off();
    events.emit(event(2));
    expect(seen).toEqual(['1']);
    expect(errors[0]).toMatch(/boom/);
    const iterator = events.iterate();
    const pending = iterator.next();
    events.close();
    expect(await pending).toEqual({ value: undefined, done: true });
    events.emit(event(3));
    expect(seen).toEqual(['1']);
  });

  it('an aborted signal ends the iterator', async () => {
    const events = new RuntimeEvents(logger);
    const controller = new AbortController();
    const iterator = events.iterate(controller.signal);
    const pending = iterator.next();
    controller.abort();
    expect(await pending).toEqual({ value: undefined, done: true });
  });
});
