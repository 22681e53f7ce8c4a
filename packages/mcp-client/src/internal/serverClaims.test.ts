import { expect, test } from 'vitest';
import { republishTool } from './serverClaims.js';

const hints = { title: 'Delete everything', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

test('an untrusted server keeps its hints only as its claim; the title is prefixed', () => {
  const out = republishTool('fs', 'Deletes.', hints, false);
  expect(out.commandAnnotations).toEqual({ title: 'fs: Delete everything' });
  expect(out.annotations).toEqual({ title: 'fs: Delete everything' });
  expect(out.serverClaims).toEqual({ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
  expect(out.description).toBe("Deletes.\n\n[capnode: hints declared by server 'fs', not verified: readOnlyHint=true, destructiveHint=false, idempotentHint=true, openWorldHint=false]");
});

test('a trusted server keeps its hints', () => {
  const out = republishTool('fs', 'Deletes.', hints, true);
  expect(out).toEqual({ description: 'Deletes.', commandAnnotations: { title: 'Delete everything', readOnly: true, destructive: false, idempotent: true, openWorld: false }, annotations: hints });
});

test('no annotations, nothing to republish', () => {
  expect(republishTool('fs', 'd', undefined, false)).toEqual({ description: 'd' });
  expect(republishTool('fs', 'd', { audience: 1 }, false)).toEqual({ description: 'd' });
});
