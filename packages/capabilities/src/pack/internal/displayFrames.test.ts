import { describe, expect, it } from 'vitest';
import { createDisplayFrames, framePoint, pointIn } from './displayFrames.js';

const fields = { scope: 'exec-1', screenIndex: 0, width: 1200, height: 675, requestedWidth: 1200, source: { x: 0, y: 0, width: 1920, height: 1080 } };

describe('display frames', () => {
  it('issues unguessable ids and accepts only the latest frame of the same scope and screen', () => {
    const frames = createDisplayFrames();
    const first = frames.issue(fields);
    const second = frames.issue(fields);
    expect(first.id).not.toBe(second.id);
    expect(second.id).toMatch(/^cn1-[0-9a-f]{32}$/);
    expect(frames.verify({ id: second.id, scope: 'exec-1', screenIndex: 0, refWidth: 1200 })).toBe(second);
    expect(() => frames.verify({ id: first.id, scope: 'exec-1', screenIndex: 0, refWidth: 1200 })).toThrow(/^COMPUTER_STALE_FRAME: /);
    expect(() => frames.verify({ id: second.id, scope: 'exec-2', screenIndex: 0, refWidth: 1200 })).toThrow(/^COMPUTER_STALE_FRAME: /);
    expect(() => frames.verify({ id: second.id, scope: 'exec-1', screenIndex: 1, refWidth: 1200 })).toThrow(/not screen 1/);
    expect(() => frames.verify({ id: undefined, scope: 'exec-1', screenIndex: 0, refWidth: 1200 })).toThrow(/take a screenshot first/);
    frames.forget('exec-1');
    expect(() => frames.verify({ id: second.id, scope: 'exec-1', screenIndex: undefined, refWidth: undefined })).toThrow(/no longer current/);
  });

  it('accepts as refWidth the delivered width or the maxWidth asked for (what OpenClaw echoes), nothing else', () => {
    const frames = createDisplayFrames();
    // A 800-px screen shot with OpenClaw's maxWidth 1200: delivered 800 wide, the agent echoes 1200.
    const small = frames.issue({ ...fields, width: 800, height: 600, requestedWidth: 1200 });
    expect(frames.verify({ id: small.id, scope: 'exec-1', screenIndex: 0, refWidth: 1200 })).toBe(small);
    expect(frames.verify({ id: small.id, scope: 'exec-1', screenIndex: 0, refWidth: 800 })).toBe(small);
    expect(() => frames.verify({ id: small.id, scope: 'exec-1', screenIndex: 0, refWidth: 1280 })).toThrow(/refWidth 1280 is not the frame's width \(800\)/);
    const error = (() => {
      try {
        frames.verify({ id: small.id, scope: 'exec-1', screenIndex: 0, refWidth: 1 });
      } catch (caught) {
        return caught as { code: string; data: unknown };
      }
    })();
    expect(error).toMatchObject({ code: 'invalid_arguments', data: { code: 'COMPUTER_STALE_FRAME' } });
  });

  it('forgets the oldest scopes beyond 64', () => {
    const frames = createDisplayFrames();
    const first = frames.issue({ ...fields, scope: 'scope-0' });
    for (let i = 1; i <= 64; i++) frames.issue({ ...fields, scope: `scope-${i}` });
    expect(() => frames.verify({ id: first.id, scope: 'scope-0', screenIndex: 0, refWidth: undefined })).toThrow(/STALE/);
  });

  it('maps frame pixels to screen pixels (pixel centres) and refuses points outside the picture', () => {
    const frames = createDisplayFrames();
    const frame = frames.issue(fields);
    expect(pointIn(fields.source, framePoint(frame, 0, 0, 'click'))).toEqual({ x: 0, y: 0 });
    expect(pointIn(fields.source, framePoint(frame, 600, 337, 'click'))).toEqual({ x: 960, y: 540 });
    expect(pointIn(fields.source, framePoint(frame, 1199, 674, 'click'))).toEqual({ x: 1919, y: 1079 });
    expect(pointIn({ x: 1920, y: 0, width: 1280, height: 1024 }, framePoint(frame, 0, 0, 'click'))).toEqual({ x: 1920, y: 0 });
    expect(() => framePoint(frame, 1200, 0, 'click')).toThrow(/^COMPUTER_INVALID_REQUEST: click \(1200, 0\) is outside the 1200×675 frame/);
    expect(() => framePoint(frame, 0, -1, 'click')).toThrow(/outside/);
    expect(() => framePoint(frame, Number.NaN, 0, 'click')).toThrow(/outside/);
    expect(() => framePoint(frame, undefined, 1, 'drag start')).toThrow(/drag start needs both x and y/);
  });
});
