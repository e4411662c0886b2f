import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LEAD_PERSONAS, type LeadPersonaName } from '../../src/simulators/personas/lead-personas.ts';
import { leadEvents } from '../helpers/agent-harness.ts';
import { getLead, uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness, type WhatsappProvider } from '../helpers/whatsapp-harness.ts';

// Each scripted persona through each provider: POST → first WhatsApp message (the approved
// template) → the lead's replies → the agent's answers → GET shows the outcome.

let h: WhatsappHarness;
const ws: Partial<Record<WhatsappProvider, { slug: string; apiKey: string; workspaceId: string }>> = {};

before(async () => {
  h = await startWhatsappHarness();
  ws.twilio = await h.workspace('twilio');
  ws.meta = await h.workspace('meta');
});
after(() => h.close());

const EXPECTED: Record<LeadPersonaName, { status: string; notes?: RegExp; messages?: number }> = {
  books: { status: 'booked' },
  'not-a-fit': { status: 'unqualified', notes: /no budget/i, messages: 2 },
  'wants-human': { status: 'needs_human', messages: 2 },
  // STOP is answered by nothing at all: the template stays the only message.
  'opts-out': { status: 'unqualified', notes: /opted out/i, messages: 1 },
  'goes-quiet': { status: 'in_conversation', messages: 1 },
  // The model breaks on its first reply: a person takes over, the lead gets the holding message.
  'breaks-model': { status: 'needs_human', messages: 2 },
};

interface Sent {
  kind: 'text' | 'template';
  text: string;
  key: string | null;
}

/** What the lead received, from the simulator of `provider`. */
function sentTo(provider: WhatsappProvider, phone: string): Sent[] {
  if (provider === 'twilio') {
    return h.twilio.messages
      .filter((m) => m.to === phone)
      .map((m) => ({
        kind: m.kind,
        text: m.text,
        key: m.params.StatusCallback ? new URL(m.params.StatusCallback).searchParams.get('outboundKey') : null,
      }));
  }
  return h.meta.sends.filter((m) => `+${m.to}` === phone).map((m) => ({ kind: m.kind, text: m.text, key: null }));
}

async function converse(provider: WhatsappProvider, persona: LeadPersonaName) {
  const w = ws[provider]!;
  const raw = uniquePhone();
  const phone = `+${raw.replace(/\D/g, '')}`;
  // Before the POST: a concurrent test's settle() may send the first message at once.
  h.persona(provider, w.slug, phone, persona);
  const { leadId } = await h.submit(w.apiKey, { name: `Ada ${persona}`, phone: raw });
  await h.settle();
  const got = await getLead(h.app.http, w.apiKey, leadId);
  assert.equal(got.status, 200, JSON.stringify(got.body));
  return { leadId, phone, sent: sentTo(provider, phone), lead: got.body.lead };
}

for (const provider of ['twilio', 'meta'] as const) {
  describe(`WhatsApp through ${provider}, persona by persona`, { concurrency: true }, () => {
    for (const persona of LEAD_PERSONAS) {
      it(`${persona}: ends ${EXPECTED[persona].status}`, async () => {
        const { leadId, sent, lead } = await converse(provider, persona);
        const expected = EXPECTED[persona];
        assert.equal(lead.status, expected.status);
        if (expected.notes) assert.match(lead.qualificationNotes, expected.notes);
        if (expected.messages !== undefined) assert.equal(sent.length, expected.messages);
        // The first message is the approved template, greeting the lead by first name.
        assert.equal(sent[0]?.kind, 'template');
        assert.match(sent[0]!.text, /^Hi Ada, thanks for your enquiry!/);
        assert.ok(sent.slice(1).every((m) => m.kind === 'text'));
        // Each message sent once, and every one delivered by the time the conversation settles.
        const { rows } = await h.app.db.pool.query(
          `SELECT status, idempotency_key FROM whatsapp_messages
            WHERE lead_id = $1 AND direction = 'outbound' ORDER BY id`,
          [leadId],
        );
        assert.equal(rows.length, sent.length);
        assert.ok(
          rows.every((r) => ['delivered', 'read'].includes(r.status)),
          JSON.stringify(rows),
        );
        if (provider === 'twilio')
          assert.deepEqual(
            sent.map((m) => m.key),
            rows.map((r) => r.idempotency_key),
          );
        if (persona === 'books') {
          assert.match(lead.bookingUid, /\w+/);
          // Both providers book in one calendar: whoever comes second gets the next free slot.
          assert.match(lead.bookingStart, /^2050-09-0\dT\d\d:[03]0:00\.000Z$/);
          assert.match(sent.at(-1)!.text, /booked/i);
        }
      });
    }
  });
}

describe('what the conversation leaves behind', () => {
  it(
    'the first accepted message moves the lead to in_conversation; ' + 'events and logs carry no message text',
    async () => {
      const { leadId } = await converse('twilio', 'not-a-fit');
      const events = await leadEvents(h.app.db.pool, leadId);
      const first = events.find((e) => e.type === 'message.sent')!;
      assert.deepEqual([first.data.from, first.data.to, first.data.actor], ['new', 'in_conversation', 'system']);
      assert.deepEqual(events.filter((e) => e.type === 'message.received').length, 1);
      const messageEvents = events.filter((e) => e.type.startsWith('message.'));
      assert.ok(!JSON.stringify(messageEvents).includes('budget'), 'no message text in the message events');
      assert.ok(!h.app.logs.join('\n').includes('budget'), 'no message text in the process log');
    },
  );

  it('the integration log has each model call and send, with the workspace credentials masked', async () => {
    const { leadId } = await converse('meta', 'wants-human');
    const { rows } = await h.app.db.pool.query(
      `SELECT provider, direction, kind, outcome, payload::text AS payload
        FROM integration_events WHERE lead_id = $1 ORDER BY id`,
      [leadId],
    );
    const summary = rows.map((r) => `${r.provider} ${r.direction} ${r.outcome}`);
    assert.ok(summary.includes('meta out accepted'), summary.join(', '));
    assert.ok(summary.includes('llm out tool_calls'), summary.join(', '));
    assert.ok(summary.includes('llm out answered'), summary.join(', '));
    assert.ok(summary.includes('meta in stored'), summary.join(', '));
    const all = rows.map((r) => r.payload).join('\n');
    assert.ok(!all.includes(h.chat.apiKey));
    assert.ok(!all.includes('meta-sim-access-token'));
  });
});
