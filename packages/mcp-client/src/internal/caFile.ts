import { X509Certificate } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { rootCertificates } from 'node:tls';

/** Largest accepted CA bundle. */
export const MAX_CA_FILE_BYTES = 1024 * 1024;

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/**
 * Reads a custom CA bundle for one server and returns the trust store to use: the default roots
 * plus the file's certificates. The path must be absolute; symlinks are followed and the opened
 * file must be a regular file of at most 1 MiB holding at least one valid PEM certificate.
 * Throws a message naming what is wrong (never the file's content).
 */
export async function loadCaBundle(path: string): Promise<string[]> {
  if (!isAbsolute(path)) throw new Error('tls_ca_cert_path must be an absolute path');
  let handle;
  try {
    handle = await open(path, constants.O_NONBLOCK === undefined ? 'r' : constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new Error(`tls_ca_cert_path cannot be opened (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new Error('tls_ca_cert_path is not a regular file');
    if (stat.size === 0) throw new Error('tls_ca_cert_path is empty');
    if (stat.size > MAX_CA_FILE_BYTES) throw new Error(`tls_ca_cert_path is larger than 1 MiB (${stat.size} bytes)`);
    const buffer = Buffer.alloc(stat.size);
    const { bytesRead } = await handle.read(buffer, 0, stat.size, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    const blocks = text.match(PEM_BLOCK) ?? [];
    if (blocks.length === 0) throw new Error('tls_ca_cert_path holds no PEM certificate');
    blocks.forEach((block, index) => {
      try {
        new X509Certificate(block);
      } catch {
        throw new Error(`tls_ca_cert_path: certificate #${index + 1} is not valid`);
      }
    });
    return [...rootCertificates, ...blocks];
  } finally {
    await handle.close();
  }
}
