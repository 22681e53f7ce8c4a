import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createMcpRuntime } from '@capnode/mcp-client/node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFakeHttpServer, type FakeHttpServer } from './fixtures/httpServer.js';
import { grantAll, memoryLogger, textOf } from './helpers.js';
import { tempDir } from '../support/testHost.js';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!hasOpenssl())('tls_ca_cert_path', () => {
  const dir = tempDir('capnode-tls-');
  const at = (name: string) => join(dir.path, name);
  let tlsServer: FakeHttpServer;
  let plainServer: FakeHttpServer;

  beforeAll(async () => {
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir.path, stdio: 'ignore' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=capnode test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign');
    openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
    writeFileSync(at('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
    openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'san.ext');
    tlsServer = await startFakeHttpServer({ tls: { key: readFileSync(at('server.key'), 'utf8'), cert: readFileSync(at('server.pem'), 'utf8') } });
    plainServer = await startFakeHttpServer();

    writeFileSync(at('empty.pem'), '');
    writeFileSync(at('garbage.pem'), 'not a certificate at all');
    writeFileSync(at('broken.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    writeFileSync(at('huge.pem'), Buffer.alloc(1024 * 1024 + 1, 0x41));
    mkdirSync(at('dir.pem'));
    symlinkSync(at('ca.pem'), at('link.pem'));
    symlinkSync(at('dir.pem'), at('link-to-dir.pem'));
  });
  afterAll(async () => {
    await tlsServer?.close();
    await plainServer?.close();
    dir[Symbol.dispose]();
  });

  test('adds the CA to the trust store (also through a symlink); without it the certificate is refused', async () => {
    const config = grantAll([
      { name: 'trusted', url: tlsServer.url, tls_ca_cert_path: at('ca.pem') },
      { name: 'linked', url: tlsServer.url, tls_ca_cert_path: at('link.pem') },
      { name: 'untrusted', url: tlsServer.url },
    ]);
    await using runtime = await createMcpRuntime(config, { agent: 'test', logger: memoryLogger() });
    const byName = Object.fromEntries(runtime.diagnostics().map((d) => [d.server, d]));
    expect(byName.trusted!.state).toBe('connected');
    expect(byName.linked!.state).toBe('connected');
    expect(byName.untrusted!.state).toBe('failed');
    expect(textOf(await runtime.call('trusted__echo'))).toBe('echo ok');
  });

  test('an invalid CA file is a hard error for that server only', async () => {
    const bad = { 'missing.pem': /cannot be opened/, 'empty.pem': /is empty/, 'garbage.pem': /no PEM certificate/, 'broken.pem': /not valid/, 'huge.pem': /larger than 1 MiB/, 'dir.pem': /not a regular file/, 'link-to-dir.pem': /not a regular file/ };
    const servers = Object.keys(bad).map((file, index) => ({ name: `bad${index}`, url: tlsServer.url, tls_ca_cert_path: at(file) }));
    const config = grantAll([...servers, { name: 'good', url: tlsServer.url, tls_ca_cert_path: at('ca.pem') }]);
    await using runtime = await createMcpRuntime(config, { agent: 'test', logger: memoryLogger() });
    const diagnostics = runtime.diagnostics();
    Object.values(bad).forEach((pattern, index) => {
      expect(diagnostics[index]!.state).toBe('failed');
      expect(diagnostics[index]!.error).toMatch(pattern);
    });
    expect(diagnostics.at(-1)!.state).toBe('connected');
  });

  test('with a CA set, a plaintext URL is refused before any request is sent', async () => {
    const before = plainServer.requests.length;
    await using runtime = await createMcpRuntime(grantAll([{ name: 'plain', url: plainServer.url, tls_ca_cert_path: at('ca.pem'), headers: { Authorization: 'Bearer do-not-send' } }]), {
      agent: 'test',
      logger: memoryLogger(),
    });
    expect(runtime.diagnostics()[0]).toMatchObject({ state: 'failed', error: expect.stringMatching(/must use https/) });
    expect(plainServer.requests.length).toBe(before);
  });
});
