import { describe, expect, it } from 'vitest';
import { mimeTypeOfName } from './mime.js';

describe('mimeTypeOfName', () => {
  it('types a name or a path by its extension, whatever its case', () => {
    expect(mimeTypeOfName('shot.PNG')).toBe('image/png');
    expect(mimeTypeOfName('/tmp/media/page.jpeg')).toBe('image/jpeg');
    expect(mimeTypeOfName('C:\\Users\\me\\notes.md')).toBe('text/markdown');
    expect(mimeTypeOfName('trace.webm')).toBe('video/webm');
  });

  it('answers octet-stream for no extension, an unknown one and an inherited key', () => {
    expect(mimeTypeOfName('Makefile')).toBe('application/octet-stream');
    expect(mimeTypeOfName('archive.tar.xz')).toBe('application/octet-stream');
    expect(mimeTypeOfName('x.constructor')).toBe('application/octet-stream');
    expect(mimeTypeOfName('.png/')).toBe('application/octet-stream');
  });
});
