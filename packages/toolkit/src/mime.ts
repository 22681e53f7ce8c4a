/**
 * MIME types of the file kinds capnode hands out as bytes (`fs.read` in base64, `browser.upload`, the
 * files of a `browser.proxy` answer), by extension. One table, so a file has the same type on every path.
 */
const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  wasm: 'application/wasm',
  webm: 'video/webm',
  txt: 'text/plain',
  csv: 'text/csv',
  md: 'text/markdown',
  html: 'text/html',
  json: 'application/json',
};

/** The MIME type of a file name or path by its extension (case-insensitive); `application/octet-stream` when unknown. */
export function mimeTypeOfName(name: string): string {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  return (extension !== undefined && Object.hasOwn(MIME_BY_EXTENSION, extension) ? MIME_BY_EXTENSION[extension] : undefined) ?? 'application/octet-stream';
}
