import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { limitYoungGenerationGrowth } from './gcTuning.js';

const newSpaceSize = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;

describe('limitYoungGenerationGrowth', () => {
  it('keeps the young generation from growing while much of it survives', () => {
    limitYoungGenerationGrowth();
    const before = newSpaceSize();
    // V8's young generation grows to 32 MB under this load unless growth is off; from its full size
    // the test could not tell the difference.
    expect(before).toBeLessThan(32 * 1024 * 1024);
    const kept: Array<{ n: number; s: string }> = [];
    for (let round = 0; round < 40; round += 1) for (let n = 0; n < 20_000; n += 1) kept.push({ n, s: `item ${n}` });
    expect(kept).toHaveLength(800_000);
    expect(newSpaceSize()).toBeLessThanOrEqual(before);
  });
});
