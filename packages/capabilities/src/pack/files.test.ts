import { describe, expect, it } from 'vitest';
import { filesOptionsFromSettings } from './files.js';

describe('filesOptionsFromSettings (fs.* and browser.upload)', () => {
  it('takes the roots of valid settings and keeps the config directory out', () => {
    const warnings: string[] = [];
    expect(filesOptionsFromSettings({ roots: ['/srv/docs'] }, '/home/me/.config/capnode', (message) => warnings.push(message))).toEqual({ roots: ['/srv/docs'], configDir: '/home/me/.config/capnode' });
    expect(filesOptionsFromSettings({}, '/cfg', (message) => warnings.push(message))).toEqual({ configDir: '/cfg' });
    expect(warnings).toEqual([]);
  });

  it('grants nothing for settings it cannot read, and says so', () => {
    const warnings: string[] = [];
    expect(filesOptionsFromSettings({ roots: '/srv/docs' }, '/cfg', (message) => warnings.push(message))).toEqual({ roots: [], configDir: '/cfg' });
    expect(warnings).toEqual([expect.stringContaining('not a list of paths')]);
  });
});
