import { describe, expect, it } from 'vitest';
import { fullSizePng } from './screenLinux.js';
import type { X11Client } from './x11.js';

describe('fullSizePng', () => {
  it('refuses a screen larger than it captures before asking the server for it', async () => {
    let asked = false;
    const client = { getImage: async () => ((asked = true), undefined) } as unknown as X11Client;
    const screen = { index: 0, name: 'huge', primary: true, x: 0, y: 0, width: 32_767, height: 32_767 };
    await expect(fullSizePng(client, screen)).rejects.toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('32767×32767') });
    expect(asked).toBe(false);
  });
});
