import { createPublicKey, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  GATEWAY_PROTOCOL_VERSION,
  buildDeviceAuthPayload,
  connectParamsSchema,
  gatewayErrorDetailCode,
  helloOkSchema,
  nodeInvokeRequestSchema,
  parseGatewayFrame,
} from './gateway.js';

// Frames and signatures below are from the real gateway 2026.9.6 (../shared/peers/transcripts/gateway-probe-all.txt).
const TOKEN = 'peer-test-token-0123456789abcdef';
/** What a node signed in the probe transcript (the real gateway accepted its signature). */
const PROBE_SIGNED = {
  deviceId: '9f0bed3d80ecbd50a7f9b24c58c7bacbee5035cfa681b056df1b68cb01a0d9e4',
  clientId: 'node-host',
  clientMode: 'node',
  role: 'node',
  scopes: [],
  signedAtMs: 1795971418492,
  token: TOKEN,
  nonce: '238b9089-602a-43b3-aa33-b28993db2309',
  platform: 'linux',
  deviceFamily: 'Linux',
} as const;

describe('device auth payload', () => {
  it('builds the v3 text a node signs, lower-casing platform and device family', () => {
    expect(buildDeviceAuthPayload(PROBE_SIGNED)).toBe(`v3|9f0bed3d80ecbd50a7f9b24c58c7bacbee5035cfa681b056df1b68cb01a0d9e4|node-host|node|node||1795971418492|${TOKEN}|238b9089-602a-43b3-aa33-b28993db2309|linux|linux`);
  });

  it('matches a signature the real gateway accepted', () => {
    const payload = buildDeviceAuthPayload(PROBE_SIGNED);
    const raw = Buffer.from('7qNOUxC1C5nE6DY7dzuSBc-YgfbEqmOd5knCJGOb19s', 'base64url');
    const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });
    const signature = Buffer.from('cI2H9ud9DxgrIimNAqD-Yu4lATePouAyOrQK8AS9ETfuVMPEuqNB-stbhIV4W4dHfDfHSUPXer6XRo3NCxyQDw', 'base64url');
    expect(verify(null, Buffer.from(payload, 'utf8'), key, signature)).toBe(true);
  });

  it('leaves absent fields empty and joins scopes with commas; v2 has nine fields', () => {
    const fields = {
      deviceId: '252da9ec80a62012663230a11f2a21015a0c20235c7aa311d1d58db9da1416f8',
      clientId: 'test',
      clientMode: 'test',
      role: 'operator',
      scopes: ['operator.read', 'operator.write', 'operator.approvals'],
      signedAtMs: 1795971418459,
      token: '<token>',
      nonce: '5bf4113d-ea57-4327-a37b-b33f6b8ccd82',
      platform: ' Linux ',
    };
    expect(buildDeviceAuthPayload(fields)).toBe(
      'v3|252da9ec80a62012663230a11f2a21015a0c20235c7aa311d1d58db9da1416f8|test|test|operator|operator.read,operator.write,operator.approvals|1795971418459|<token>|5bf4113d-ea57-4327-a37b-b33f6b8ccd82|linux|',
    );
    expect(buildDeviceAuthPayload({ ...fields, token: undefined }, 'v2')).toBe(
      'v2|252da9ec80a62012663230a11f2a21015a0c20235c7aa311d1d58db9da1416f8|test|test|operator|operator.read,operator.write,operator.approvals|1795971418459||5bf4113d-ea57-4327-a37b-b33f6b8ccd82',
    );
  });
});

describe('gateway frames', () => {
  it('parses requests, responses and events, keeping unknown fields', () => {
    const event = parseGatewayFrame('{"type":"event","event":"connect.challenge","payload":{"nonce":"n","ts":1},"extra":1}');
    expect(event).toMatchObject({ ok: true, frame: { type: 'event', event: 'connect.challenge', extra: 1 } });
    const failed = parseGatewayFrame(
      JSON.stringify({ type: 'res', id: 'neg-1', ok: false, error: { code: 'INVALID_REQUEST', message: 'protocol mismatch', details: { code: 'PROTOCOL_MISMATCH', expectedProtocol: 4 } } }),
    );
    expect(failed.ok && failed.frame.type === 'res' && gatewayErrorDetailCode(failed.frame.error)).toBe('PROTOCOL_MISMATCH');
    expect(parseGatewayFrame('{"type":"req","id":"1","method":"node.list","params":{}}')).toMatchObject({ ok: true });
  });

  it('rejects malformed frames with a short reason and never throws', () => {
    const cases = ['', 'nope', '[]', 'null', '{"type":"event"}', '{"type":"res","id":"1","ok":false}', '{"type":"res","id":"","ok":true}', '{"type":"what"}', '{"type":7}', `{"type":"${'x'.repeat(5000)}"}`];
    for (const text of cases) {
      const result = parseGatewayFrame(text);
      expect(result.ok, text.slice(0, 40)).toBe(false);
      if (!result.ok) expect(result.reason.length).toBeLessThan(200);
    }
  });

  it('validates hello-ok as the gateway sends it', () => {
    const hello = {
      type: 'hello-ok',
      protocol: 4,
      server: { version: '2026.9.6', buildId: 'x', connId: '213874f3-f8da-451a-ab1c-986534216505' },
      features: { methods: ['connect'], events: ['tick'] },
      snapshot: {},
      auth: { method: 'token', role: 'node', scopes: [], deviceToken: '0HXiWJ4z8qXVXxluuGCAb4hHdyvjBIWHELF3a6sOXbg', issuedAtMs: 1795971348064 },
      policy: { maxPayload: 26214400, maxBufferedBytes: 52428800, tickIntervalMs: 30000, attachments: { maxBytes: 19464192 } },
    };
    expect(helloOkSchema.parse(hello).policy.maxPayload).toBe(26214400);
    expect(helloOkSchema.safeParse({ ...hello, policy: { maxPayload: 1 } }).success).toBe(false);
    expect(GATEWAY_PROTOCOL_VERSION).toBe(4);
  });

  it('describes connect params and node invokes', () => {
    const connect = {
      minProtocol: 4,
      maxProtocol: 4,
      client: { id: 'node-host', version: '0.0.1-probe', platform: 'linux', deviceFamily: 'Linux', mode: 'node', displayName: 'probe-node' },
      role: 'node',
      scopes: [],
      caps: ['device'],
      commands: ['device.info'],
      auth: { token: TOKEN },
      locale: 'en-US',
      userAgent: 'gateway-probe/0.0.1',
      device: {
        id: '9f0bed3d80ecbd50a7f9b24c58c7bacbee5035cfa681b056df1b68cb01a0d9e4',
        publicKey: '7qNOUxC1C5nE6DY7dzuSBc-YgfbEqmOd5knCJGOb19s',
        signature: 'cI2H9ud9DxgrIimNAqD-Yu4lATePouAyOrQK8AS9ETfuVMPEuqNB-stbhIV4W4dHfDfHSUPXer6XRo3NCxyQDw',
        signedAt: 1795971418492,
        nonce: '238b9089-602a-43b3-aa33-b28993db2309',
      },
    };
    expect(connectParamsSchema.safeParse(connect).success).toBe(true);
    expect(connectParamsSchema.safeParse({ ...connect, client: { ...connect.client, id: 'my-client' } }).success).toBe(false);
    expect(connectParamsSchema.safeParse({ ...connect, client: { ...connect.client, mode: 'bot' } }).success).toBe(false);
    expect(
      nodeInvokeRequestSchema.parse({
        id: 'ad7af021-48b1-405b-bc63-e4b13093e6d2',
        nodeId: 'bf4f60f38fa617c0accc63f8915d2e6126fe0fda71d731b2f2f7c0e092ff0913',
        command: 'device.info',
        paramsJSON: '{}',
        timeoutMs: 9997,
        idempotencyKey: 'e0edf5f0-489a-4917-9d86-336b76913cc7',
      }).timeoutMs,
    ).toBe(9997);
  });
});
