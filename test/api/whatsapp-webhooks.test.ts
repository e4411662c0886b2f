import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { META_SIM } from '../../src/simulators/meta/meta-simulator.ts';
import { signMetaBody } from '../../src/whatsapp/meta/meta-signature.ts';
import { computeTwilioSignature } from '../../src/whatsapp/twilio/twilio-signature.ts';
import { transitionLead } from '../../src/leads/lead-state.ts';
import { leadEvents } from '../helpers/agent-harness.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// The inbound side: authentication, routing by receiving number and sender, duplicates, unknown
// senders, opt-out words, leads with a person, and one queued turn for a burst of messages.

let h: WhatsappHarness;
let tw: { slug: string; apiKey: string; workspaceId: string };
let mt: { slug: string; apiKey: string; workspaceId: string };

before(async () => {
  h = await startWhatsappHarness();
  tw = await h.workspace('twilio');
  mt = await h.workspace('meta');
});
after(() => h.close());

let sid = 0;
function twilioInbound(from: string, body: string, overrides: Record<string, string> = {}): Record<string, string> {
  const id = `SM${String(++sid).padStart(32, '0')}`;
  return {
    MessageSid: id,
    SmsSid: id,
    AccountSid: h.twilio.accountSid,
    From: `whatsapp:${from}`,
    To: `whatsapp:${h.twilio.sender}`,
    Body: body,
    NumMedia: '0',
    ProfileName: 'Ada',
    WaId: from.slice(1),
    ...overrides,
  };
}

async function postTwilio(path: string, params: Record<string, string>, signature?: string) {
  const url = `${h.baseUrl}${path}`;
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': signature ?? computeTwilioSignature(h.twilio.authToken, url, params),
    },
    body: new URLSearchParams(params).toString(),
  });
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
}

/** A lead in the Twilio workspace whose template went out (no persona: it stays silent). */
async function leadWithTemplate(workspace = tw): Promise<{ leadId: string; phone: string }> {
  const raw = uniquePhone();
  const { leadId } = await h.submit(workspace.apiKey, { phone: raw });
  await h.settle();
  return { leadId, phone: `+${raw.replace(/\D/g, '')}` };
}

const count = async (sql: string, values: unknown[]) => (await h.app.db.pool.query(sql, values)).rows[0].n as number;
const inboundCount = (leadId: string) =>
  count(`SELECT count(*)::int AS n FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'inbound'`, [leadId]);
const leadStatus = async (leadId: string) =>
  (await h.app.db.pool.query('SELECT status, qualification_notes FROM leads WHERE id = $1', [leadId])).rows[0];

describe('Twilio inbound webhook', () => {
  it('stores the message, answers empty TwiML, and the agent answers', async () => {
    const { leadId, phone } = await leadWithTemplate();
    const res = await postTwilio(
      `/api/whatsapp/twilio/${tw.slug}/inbound`,
      twilioInbound(phone, 'Yes, I own the house.'),
    );
    assert.equal(res.status, 200);
    assert.match(res.type ?? '', /text\/xml/);
    assert.equal(res.text, '<?xml version="1.0" encoding="UTF-8"?><Response></Response>');
    await h.settle();
    assert.equal(await inboundCount(leadId), 1);
    assert.equal(h.twilio.messages.filter((m) => m.to === phone).length, 2);
  });

  it('refuses a wrong signature before reading anything (401)', async () => {
    const { leadId, phone } = await leadWithTemplate();
    const res = await postTwilio(
      `/api/whatsapp/twilio/${tw.slug}/inbound`,
      twilioInbound(phone, 'hello'),
      'c2lnbmF0dXJl',
    );
    assert.equal(res.status, 401);
    assert.equal(await inboundCount(leadId), 0);
  });

  it('checks the signature against PUBLIC_BASE_URL + path, so a signature for another URL fails', async () => {
    const { phone } = await leadWithTemplate();
    const params = twilioInbound(phone, 'hello');
    const elsewhere = computeTwilioSignature(
      h.twilio.authToken,
      `http://proxy.internal/api/whatsapp/twilio/${tw.slug}/inbound`,
      params,
    );
    assert.equal((await postTwilio(`/api/whatsapp/twilio/${tw.slug}/inbound`, params, elsewhere)).status, 401);
  });

  it('a query string in the configured webhook URL is part of what Twilio signs', async () => {
    const { leadId, phone } = await leadWithTemplate();
    const path = `/api/whatsapp/twilio/${tw.slug}/inbound?source=spring-campaign&v=2`;
    // Signed over the whole URL Twilio called, query included: accepted and stored.
    assert.equal((await postTwilio(path, twilioInbound(phone, 'hello'))).status, 200);
    assert.equal(await inboundCount(leadId), 1);
    // The same request signed over the URL without its query is not Twilio's signature.
    const params = twilioInbound(phone, 'hello again');
    const withoutQuery = computeTwilioSignature(
      h.twilio.authToken,
      `${h.baseUrl}/api/whatsapp/twilio/${tw.slug}/inbound`,
      params,
    );
    assert.equal((await postTwilio(path, params, withoutQuery)).status, 401);
    assert.equal(await inboundCount(leadId), 1);
  });

  it('404 for an unknown slug and for a workspace on the other provider', async () => {
    const { phone } = await leadWithTemplate();
    assert.equal((await postTwilio('/api/whatsapp/twilio/no-such-ws/inbound', twilioInbound(phone, 'x'))).status, 404);
    assert.equal((await postTwilio(`/api/whatsapp/twilio/${mt.slug}/inbound`, twilioInbound(phone, 'x'))).status, 404);
  });

  it('ignores a duplicate delivery of the same message id', async () => {
    const { leadId, phone } = await leadWithTemplate();
    const params = twilioInbound(phone, 'Yes, I own the house.');
    assert.equal((await postTwilio(`/api/whatsapp/twilio/${tw.slug}/inbound`, params)).status, 200);
    assert.equal((await postTwilio(`/api/whatsapp/twilio/${tw.slug}/inbound`, params)).status, 200);
    await h.settle();
    assert.equal(await inboundCount(leadId), 1);
    assert.equal(h.twilio.messages.filter((m) => m.to === phone).length, 2, 'answered once');
  });

  it('logs an unknown sender and creates no lead', async () => {
    const before = await count('SELECT count(*)::int AS n FROM leads', []);
    const res = await postTwilio(
      `/api/whatsapp/twilio/${tw.slug}/inbound`,
      twilioInbound('+15550009999', 'who is this?'),
    );
    assert.equal(res.status, 200);
    assert.equal(await count('SELECT count(*)::int AS n FROM leads', []), before);
    assert.equal(
      await count(
        `SELECT count(*)::int AS n FROM integration_events WHERE workspace_id = $1 AND outcome = 'unknown-sender'`,
        [tw.workspaceId],
      ),
      1,
    );
    assert.ok(!h.app.logs.join('\n').includes('5550009999'), 'the number stays out of the process log');
  });

  it('drops a message addressed to another receiving number', async () => {
    const { leadId, phone } = await leadWithTemplate();
    const res = await postTwilio(
      `/api/whatsapp/twilio/${tw.slug}/inbound`,
      twilioInbound(phone, 'hi', { To: 'whatsapp:+15550001111' }),
    );
    assert.equal(res.status, 200);
    assert.equal(await inboundCount(leadId), 0);
  });

  it('a burst of messages while no turn has started queues one turn, which answers them together', async () => {
    const { leadId, phone } = await leadWithTemplate();
    for (const text of ['Hi!', 'Yes I own it.', 'We pay about 120 EUR.']) {
      assert.equal(
        (await postTwilio(`/api/whatsapp/twilio/${tw.slug}/inbound`, twilioInbound(phone, text))).status,
        200,
      );
    }
    assert.equal(await count("SELECT count(*)::int AS n FROM outbox WHERE payload->>'leadId' = $1", [leadId]), 1);
    await h.settle();
    const { rows } = await h.app.db.pool.query(
      `SELECT count(DISTINCT turn_id)::int AS turns, count(*)::int AS n
        FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'inbound'`,
      [leadId],
    );
    assert.deepEqual(rows[0], { turns: 1, n: 3 });
    assert.equal(h.twilio.messages.filter((m) => m.to === phone).length, 2, 'one answer to the three messages');
  });
});

describe('opt-out and leads that wait for a person', () => {
  for (const word of ['STOP', 'stop', ' Unsubscribe! ', 'opt out']) {
    it(`"${word}" closes the lead as opted out and nothing more is sent`, async () => {
      const { leadId, phone } = await leadWithTemplate();
      await postTwilio(`/api/whatsapp/twilio/${tw.slug}/inbound`, twilioInbound(phone, word));
      await h.settle();
      const lead = await leadStatus(leadId);
      assert.equal(lead.status, 'unqualified');
      assert.match(lead.qualification_notes, /opted out/i);
      // A later message is stored, never answered.
      await postTwilio(`/api/whatsapp/twilio/${tw.slug}/inbound`, twilioInbound(phone, 'Actually, one question'));
      await h.settle();
      assert.equal(await inboundCount(leadId), 2);
      assert.equal(h.twilio.messages.filter((m) => m.to === phone).length, 1);
      assert.ok((await leadEvents(h.app.db.pool, leadId)).some((e) => e.type === 'lead.opted_out'));
    });
  }

  it('opted out, then taken over and resumed by an operator before the queued turn ran: nothing is sent', async () => {
    const { leadId, phone } = await leadWithTemplate();
    await postTwilio(`/api/whatsapp/twilio/${tw.slug}/inbound`, twilioInbound(phone, 'Hello'));
    assert.equal(
      await count(`SELECT count(*)::int AS n FROM outbox WHERE payload->>'leadId' = $1`, [leadId]),
      1,
      'a turn is queued',
    );
    await postTwilio(`/api/whatsapp/twilio/${tw.slug}/inbound`, twilioInbound(phone, 'STOP'));
    // The operator takes the lead over and hands it back to the agent (the dashboard's moves).
    assert.ok(
      (
        await transitionLead(h.app.db.pool, {
          leadId,
          to: 'needs_human',
          actor: 'operator',
          event: { type: 'lead.taken_over' },
        })
      ).ok,
    );
    assert.ok(
      (
        await transitionLead(h.app.db.pool, {
          leadId,
          to: 'in_conversation',
          actor: 'operator',
          event: { type: 'lead.resumed' },
        })
      ).ok,
    );
    assert.equal((await leadStatus(leadId)).status, 'in_conversation');
    const modelCalls = h.chat.requests.length;
    await h.settle();
    assert.equal(h.twilio.messages.filter((m) => m.to === phone).length, 1, 'only the first-contact template');
    assert.equal(h.chat.requests.length, modelCalls, 'no answer was even written');
    const { rows } = await h.app.db.pool.query(
      `SELECT output->>'outcome' AS outcome FROM pgboss.job
        WHERE data->>'leadId' = $1 ORDER BY created_on DESC LIMIT 1`,
      [leadId],
    );
    assert.equal(rows[0].outcome, 'opted_out');
  });

  it('"please stop the music" is not an opt-out', async () => {
    const { leadId, phone } = await leadWithTemplate();
    await postTwilio(`/api/whatsapp/twilio/${tw.slug}/inbound`, twilioInbound(phone, 'please stop the music'));
    await h.settle();
    const { rows } = await h.app.db.pool.query('SELECT opted_out_at FROM leads WHERE id = $1', [leadId]);
    assert.equal(rows[0].opted_out_at, null);
    assert.equal(h.twilio.messages.filter((m) => m.to === phone).length, 2, 'the agent answered');
  });

  it('a lead with a person: the message is stored and no turn is queued', async () => {
    const { leadId, phone } = await leadWithTemplate();
    await h.app.db.pool.query(`UPDATE leads SET status = 'needs_human' WHERE id = $1`, [leadId]);
    await postTwilio(`/api/whatsapp/twilio/${tw.slug}/inbound`, twilioInbound(phone, 'Hello?'));
    assert.equal(await inboundCount(leadId), 1);
    assert.equal(await count(`SELECT count(*)::int AS n FROM outbox WHERE payload->>'leadId' = $1`, [leadId]), 0);
  });
});

describe('Meta webhook', () => {
  const path = () => `/api/whatsapp/meta/${mt.slug}/webhook`;

  it('answers the subscription handshake with the challenge, and 403 to a wrong verify token', async () => {
    const ok = await fetch(
      `${h.baseUrl}${path()}?hub.mode=subscribe&hub.verify_token=verify-token-for-tests&hub.challenge=1158201444`,
    );
    assert.equal(ok.status, 200);
    assert.equal(await ok.text(), '1158201444');
    const wrong = await fetch(`${h.baseUrl}${path()}?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1`);
    assert.equal(wrong.status, 403);
  });

  it('refuses a body whose X-Hub-Signature-256 does not match (401)', async () => {
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
    const bad = await fetch(`${h.baseUrl}${path()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signMetaBody('another-secret', body) },
      body,
    });
    assert.equal(bad.status, 401);
    const good = await fetch(`${h.baseUrl}${path()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signMetaBody(META_SIM.appSecret, body) },
      body,
    });
    assert.equal(good.status, 200);
  });

  it('stores a message and answers; a re-sent delivery changes nothing', async () => {
    const raw = uniquePhone();
    const phone = `+${raw.replace(/\D/g, '')}`;
    const { leadId } = await h.submit(mt.apiKey, { phone: raw });
    await h.settle();
    await h.leadSays('meta', mt.slug, phone, 'Yes, I own the house.');
    await h.settle();
    const delivery = h.meta.deliveries.filter((d) => d.kind === 'message').at(-1)!;
    const again = await fetch(delivery.url!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': delivery.signature },
      body: delivery.body,
    });
    assert.equal(again.status, 200);
    await h.settle();
    assert.equal(await inboundCount(leadId), 1);
    assert.equal(h.meta.sends.filter((s) => `+${s.to}` === phone).length, 2);
  });
});
