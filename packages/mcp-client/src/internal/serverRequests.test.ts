import { describe, expect, it } from 'vitest';
import { clientCapabilities } from './serverRequests.js';

describe('clientCapabilities', () => {
  it('declares a capability only for a hook that can answer it', () => {
    expect(clientCapabilities({})).toEqual({});
    expect(clientCapabilities({ onSampling: () => ({ model: 'm', role: 'assistant', content: { type: 'text', text: '' } }) })).toEqual({ sampling: {} });
    expect(clientCapabilities({ forwardElicitation: true })).toEqual({ elicitation: { form: {} } });
    expect(clientCapabilities({ onElicitation: () => ({ action: 'decline' }), forwardElicitation: true })).toEqual({ elicitation: { form: {}, url: {} } });
    expect(clientCapabilities({ roots: [] })).toEqual({ roots: { listChanged: true } });
  });
});
