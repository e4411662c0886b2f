import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { VapiCall } from '../../src/simulators/vapi/vapi-sim-messages.ts';
import { postLead, validLead } from './http.ts';
import { startVoiceHarness, voiceWorkspace, type VoiceHarness, type VoiceWorkspace } from './voice-harness.ts';

// The setup of the tests that deliver Vapi's server messages one by one: the voice harness and one
// voice workspace. Each test file that calls voiceWorkspaceSetup gets its own (its before/after).

export interface VoiceWorkspaceSetup {
  h: VoiceHarness;
  ws: VoiceWorkspace;
  /** The header Vapi sends with every server message to this workspace (or to w). */
  secret(w?: VoiceWorkspace): { 'x-vapi-secret': string };
  /** The harness clock's now, as Vapi stamps its messages. */
  at(): number;
  /** A dispatched call (through the real submission), and the Call object Vapi holds for it. */
  dispatched(): Promise<{ leadId: string; call: VapiCall }>;
}

/** Registers the calling file's before/after; h and ws are set once its before has run. */
export function voiceWorkspaceSetup(): VoiceWorkspaceSetup {
  const s = {
    secret: (w: VoiceWorkspace = s.ws) => ({ 'x-vapi-secret': w.secret }),
    at: () => s.h.clock.now,
    async dispatched() {
      const res = await postLead(s.h.app.http, s.ws.apiKey, validLead({ email: 'ada@example.com' }));
      assert.equal(res.status, 201);
      const call = s.h.vapi.calls.find((c) => c.call.id === res.body.providerCallId)!.call;
      return { leadId: res.body.leadId, call };
    },
  } as VoiceWorkspaceSetup;

  before(async () => {
    s.h = await startVoiceHarness();
    s.ws = await voiceWorkspace(s.h);
  });
  after(async () => {
    await s.h.close();
  });

  return s;
}
