import type { Capability } from '@capnode/capabilities';
import { settingsSchema } from '@capnode/host/settings';
import { startTestHost, type TestHost, type TestHostOptions } from './testHost.js';

/**
 * Consent for every category, when this host has consent settings (the consent pipeline hook turns
 * categories off by default): pack tests exercise the commands, consent tests exercise the gate.
 */
export function allowAllConsent(): Record<string, unknown> {
  const shape = (settingsSchema as unknown as { shape?: Record<string, unknown> }).shape;
  return shape && 'consent' in shape ? { consent: { screen: 'allow', camera: 'allow', microphone: 'allow', location: 'allow' } } : {};
}

/** A real host (MCP over HTTP, SDK v2 client) serving `capabilities` beside the built-ins, consent allowed. */
export function startPackHost(capabilities: readonly Capability[], options: TestHostOptions = {}): Promise<TestHost> {
  return startTestHost({
    ...options,
    settings: { ...allowAllConsent(), ...options.settings },
    host: { ...options.host, capabilities: [...(options.host?.capabilities ?? []), ...capabilities] },
  });
}

/** A `tools/call` result as the SDK client returns it, read loosely by tests. */
export interface RawToolResult {
  isError?: boolean;
  content?: { type: string; text?: string; data?: string; mimeType?: string }[];
  structuredContent?: Record<string, any>;
  _meta?: Record<string, any>;
}
