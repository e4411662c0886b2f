import type { Queryable } from '../db/pool.ts';
import type { Sandbox, SandboxProviders } from '../sandbox/sandbox.ts';
import type { PlaceCallRequest, PlaceCallResult, ProviderExchange, VoiceProvider } from '../voice/voice-provider.ts';
import type { MessagingProvider, SendMessageResult } from '../whatsapp/messaging-provider.ts';
import type { ConversationProviders } from '../whatsapp/turn-providers.ts';
import { DO_NOT_CONTACT, DO_NOT_CONTACT_MESSAGE, isSuppressed } from './suppression.ts';

// The do-not-contact gate, put around the providers once in the composition root (live and
// sandbox): every WhatsApp message (first contact, agent reply, operator reply, follow-up, nudge)
// leaves through a MessagingProvider's `send`, every call (POST, retries, callbacks) through a
// VoiceProvider's `placeCall`. Whoever asked for the contact, the list is checked here, just before
// the provider is called, and a listed number is refused with the permanent code `do_not_contact`:
// the callers already settle a provider's refusal, and recognise this code to close the lead
// (src/whatsapp/turn-send.ts, src/leads/lead-service.ts). A refusal is never a silent drop.

/** The refusal of a message to a listed number: `recipient` (permanent) for callers that do not know the code. */
export const MESSAGE_REFUSED: SendMessageResult = {
  ok: false,
  kind: 'recipient',
  code: DO_NOT_CONTACT,
  message: DO_NOT_CONTACT_MESSAGE,
};

const CALL_REFUSED: PlaceCallResult = { ok: false, code: DO_NOT_CONTACT, message: DO_NOT_CONTACT_MESSAGE };

export function gateMessaging(inner: MessagingProvider, db: Queryable, workspaceId: string): MessagingProvider {
  return {
    name: inner.name,
    async send(request) {
      if (await isSuppressed(db, workspaceId, request.to)) return MESSAGE_REFUSED;
      return inner.send(request);
    },
  };
}

export function gateConversation(inner: ConversationProviders, db: Queryable): ConversationProviders {
  return {
    scheduling: inner.scheduling,
    chat: (settings) => inner.chat(settings),
    messaging(workspace, settings) {
      const provider = inner.messaging(workspace, settings);
      return provider ? gateMessaging(provider, db, workspace.id) : null;
    },
  };
}

export function gateVoice(inner: VoiceProvider, db: Queryable): VoiceProvider {
  const suppressed = (req: PlaceCallRequest) => isSuppressed(db, req.metadata.workspaceId, req.customer.number);
  const gated: VoiceProvider = {
    async placeCall(req) {
      if (await suppressed(req)) return CALL_REFUSED;
      return inner.placeCall(req);
    },
  };
  const traced = inner.placeCallTraced?.bind(inner);
  if (traced) {
    gated.placeCallTraced = async (req) => {
      // No request went out: the integration log says so, without the number.
      const exchange: ProviderExchange = { method: 'POST', path: '/call', error: DO_NOT_CONTACT_MESSAGE, ms: 0 };
      if (await suppressed(req)) return { result: CALL_REFUSED, exchange };
      return traced(req);
    };
  }
  return gated;
}

/** The sandbox's simulated providers behind the same gate (a sandbox lead is never contacted either). */
export function gateSandbox(inner: Sandbox, db: Queryable): Sandbox {
  const gated = new WeakMap<SandboxProviders, SandboxProviders>();
  return {
    async providers() {
      const sb = await inner.providers();
      let g = gated.get(sb);
      if (!g) {
        g = { ...sb, voice: gateVoice(sb.voice, db), conversation: gateConversation(sb.conversation, db) };
        gated.set(sb, g);
      }
      return g;
    },
    settled: () => inner.settled(),
    close: () => inner.close(),
  };
}
