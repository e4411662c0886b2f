// A delivery status reaches only the messages of the workspace and mode (live or sandbox) whose
// signature it carries (migrations/032). Workspace acme's admin chooses acme's own Twilio auth
// token and Meta app secret, so acme can sign any status it likes for acme's URLs: what it names
// of workspace globex (a key, a provider message id) must change nothing of globex's and show
// nothing of globex in acme's integration log. Our keys are random, and a status never rewrites a
// provider id we recorded.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Pool } from '../../src/db/pool.ts';
import { META_SIM } from '../../src/simulators/meta/meta-simulator.ts';
import { recordAcceptedSend, recordAcceptedSends, type AcceptedSend } from '../../src/whatsapp/delivery-status.ts';
import { signMetaBody } from '../../src/whatsapp/meta/meta-signature.ts';
import { computeTwilioSignature } from '../../src/whatsapp/twilio/twilio-signature.ts';
import { createFirstContactTurns } from '../../src/whatsapp/turn-queries.ts';
import { admin, makeOperator, signIn } from '../helpers/admin.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

type Ws = { slug: string; apiKey: string; workspaceId: string };

let h: WhatsappHarness;
let globex: Ws;
let globexMeta: Ws;
let acme: Ws;
let acmeMeta: Ws;
const ACME_TOKEN = 'acme-chose-this-auth-token';
const ACME_APP_SECRET = 'acme-chose-this-app-secret';

before(async () => {
  h = await startWhatsappHarness();
  globex = await h.workspace('twilio');
  globexMeta = await h.workspace('meta');
  // acme's own credentials. Created without the harness's helper, which would point the Meta
  // simulator's webhooks at acme.
  const twilio = {
    provider: 'twilio' as const,
    accountSid: h.twilio.accountSid,
    authToken: ACME_TOKEN,
    from: h.twilio.sender,
    templateContentSid: h.twilio.templateSid,
  };
  const meta = {
    provider: 'meta' as const,
    accessToken: META_SIM.accessToken,
    phoneNumberId: META_SIM.phoneNumberId,
    appSecret: ACME_APP_SECRET,
    verifyToken: 'acme-verify-token',
    templateName: META_SIM.template.name,
    templateLanguage: META_SIM.template.language,
  };
  acme = await h.app.createWorkspace('whatsapp', { whatsapp: twilio }, `acme-${process.pid}`);
  acmeMeta = await h.app.createWorkspace('whatsapp', { whatsapp: meta }, `acme-meta-${process.pid}`);
});
after(() => h?.close());

const query = async (sql: string, values: unknown[]) => (await h.app.db.pool.query(sql, values)).rows;

interface Sent {
  leadId: string;
  messageId: number;
  key: string;
  pmid: string;
}

/** A lead of `ws` whose first message went out (the simulator reported it delivered). */
async function sentLead(ws: Ws): Promise<Sent> {
  const { leadId } = await h.submit(ws.apiKey, { phone: uniquePhone() });
  await h.settle();
  const [m] = await query(
    `SELECT id, idempotency_key, provider_message_id FROM whatsapp_messages
      WHERE lead_id = $1 AND direction = 'outbound'`,
    [leadId],
  );
  return { leadId, messageId: Number(m.id), key: m.idempotency_key, pmid: m.provider_message_id };
}

/** Everything a status could change of a lead: its row, its messages, its timeline. */
async function snapshot(leadId: string) {
  return {
    lead: await query('SELECT status, updated_at FROM leads WHERE id = $1', [leadId]),
    messages: await query(
      `SELECT id, status, provider_message_id, error_code, error_message, status_at
         FROM whatsapp_messages WHERE lead_id = $1 ORDER BY id`,
      [leadId],
    ),
    timeline: await query('SELECT id, type, data FROM lead_events WHERE lead_id = $1 ORDER BY id', [leadId]),
  };
}

/** A workspace's integration log, as its admin reads it. */
function logOf(ws: Ws) {
  return query(
    `SELECT lead_id, kind, outcome, payload::text AS payload FROM integration_events
      WHERE workspace_id = $1 ORDER BY id`,
    [ws.workspaceId],
  );
}

/** A status callback to `ws`'s URL (under `base`: '' live, '/sandbox'), signed with `token`. */
async function twilioStatus(ws: Ws, token: string, params: Record<string, string>, key?: string, base = '') {
  const url = `${h.baseUrl}${base}/api/whatsapp/twilio/${ws.slug}/status${key ? `?outboundKey=${key}` : ''}`;
  const signature = computeTwilioSignature(token, url, params);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    body: new URLSearchParams(params).toString(),
  });
  return res.status;
}

const failed = (sid: string): Record<string, string> => ({
  MessageSid: sid,
  SmsSid: sid,
  AccountSid: h.twilio.accountSid,
  MessageStatus: 'failed',
  ErrorCode: '63016',
  From: `whatsapp:${h.twilio.sender}`,
  To: 'whatsapp:+15550001111',
});
const sent = (sid: string): Record<string, string> => {
  const { ErrorCode: _, ...rest } = failed(sid);
  return { ...rest, MessageStatus: 'sent' };
};
const attackerSid = (n: number) => `SM${String(n).padStart(32, 'a')}`;

async function metaStatus(ws: Ws, appSecret: string, wamid: string) {
  const status = {
    id: wamid,
    status: 'failed',
    timestamp: '2524608000',
    recipient_id: '15550001111',
    errors: [{ code: 131047, title: 'Re-engagement message' }],
  };
  const metadata = { display_phone_number: '15550000000', phone_number_id: META_SIM.phoneNumberId };
  const value = { messaging_product: 'whatsapp', metadata, statuses: [status] };
  const entry = [{ id: 'waba', changes: [{ field: 'messages', value }] }];
  const body = JSON.stringify({ object: 'whatsapp_business_account', entry });
  const res = await fetch(`${h.baseUrl}/api/whatsapp/meta/${ws.slug}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': signMetaBody(appSecret, body) },
    body,
  });
  return res.status;
}

/** Nothing of the victim's lead in the attacker's log since `from`; returns the outcomes logged. */
async function nothingOf(victim: Sent, attacker: Ws, from: number) {
  const log = (await logOf(attacker)).slice(from);
  assert.ok(log.length > 0, 'the status was logged');
  for (const e of log) {
    assert.equal(e.lead_id, null);
    assert.ok(!e.payload.includes(victim.leadId), 'no lead id of the other workspace');
  }
  return log.map((e) => e.outcome);
}

describe('a Twilio status signed for workspace A', () => {
  it("naming B's message by its key (failed, 63016) leaves B's message, lead and timeline untouched", async () => {
    const victim = await sentLead(globex);
    const before = await snapshot(victim.leadId);
    assert.equal(before.lead[0].status, 'in_conversation');
    const from = (await logOf(acme)).length;
    const logLines = h.app.logs.length;
    // The attack of the report: acme's own signature, globex's key in the query.
    assert.equal(await twilioStatus(acme, ACME_TOKEN, failed(attackerSid(1)), victim.key), 204);
    // The same, naming globex's provider message id instead of its key; and a plain `read` (a
    // status that only moves a message forward is applied by a statement of its own).
    assert.equal(await twilioStatus(acme, ACME_TOKEN, failed(victim.pmid)), 204);
    assert.equal(await twilioStatus(acme, ACME_TOKEN, { ...sent(victim.pmid), MessageStatus: 'read' }), 204);
    assert.deepEqual(await snapshot(victim.leadId), before);
    assert.deepEqual(await nothingOf(victim, acme, from), ['unknown', 'held', 'held']);
    // The process log says a status was ignored, with nothing of the status itself.
    const lines = h.app.logs.slice(logLines).join('\n');
    assert.match(lines, /whatsapp status for no message of this workspace ignored/);
    for (const secret of [victim.key, victim.pmid, victim.leadId, '5550001111']) assert.ok(!lines.includes(secret));
  });

  it('a sequential key of an older message (turn-<id>) reaches no other workspace either', async () => {
    const victim = await sentLead(globex);
    const [t] = await query('SELECT turn_id FROM whatsapp_messages WHERE id = $1', [victim.messageId]);
    const legacy = `turn-${t.turn_id}`;
    await query('UPDATE whatsapp_messages SET idempotency_key = $2 WHERE id = $1', [victim.messageId, legacy]);
    const before = await snapshot(victim.leadId);
    const from = (await logOf(acme)).length;
    assert.equal(await twilioStatus(acme, ACME_TOKEN, failed(attackerSid(2)), legacy), 204);
    assert.deepEqual(await snapshot(victim.leadId), before);
    assert.deepEqual(await nothingOf(victim, acme, from), ['unknown']);
  });

  it("the sandbox's URL of the same workspace does not reach its live messages (mode)", async () => {
    const victim = await sentLead(globex);
    const before = await snapshot(victim.leadId);
    const sandbox = (await h.app.sandbox.providers()).settings.whatsapp;
    const token = sandbox?.provider === 'twilio' ? sandbox.authToken : assert.fail('the sandbox speaks Twilio');
    assert.equal(await twilioStatus(globex, token, failed(attackerSid(3)), victim.key, '/sandbox'), 204);
    assert.equal(await twilioStatus(globex, token, failed(victim.pmid), undefined, '/sandbox'), 204);
    assert.deepEqual(await snapshot(victim.leadId), before);
  });
});

describe('a Meta status signed for workspace A', () => {
  it("naming B's wamid (failed, 131047) leaves B's message, lead and timeline untouched", async () => {
    const victim = await sentLead(globexMeta);
    const before = await snapshot(victim.leadId);
    assert.equal(before.lead[0].status, 'in_conversation');
    assert.match(victim.pmid, /^wamid\./);
    const from = (await logOf(acmeMeta)).length;
    assert.equal(await metaStatus(acmeMeta, ACME_APP_SECRET, victim.pmid), 200);
    assert.deepEqual(await snapshot(victim.leadId), before);
    await nothingOf(victim, acmeMeta, from);
  });

  it('held for A, it is not applied when B records a send under that id', async () => {
    // Meta's ids are not guessable; this isolates the held status's own scope: acme holds a
    // failure for an id, and globex's send is then recorded under the same id, by a batch's
    // recording (first contacts) and by a single send's (replies).
    const single = (db: Pool, s: AcceptedSend[]) => recordAcceptedSend(db, s[0]!);
    for (const [n, record] of [
      [1, recordAcceptedSends],
      [2, single],
    ] as const) {
      const wamid = `wamid.future-id-of-another-workspace-${n}`;
      assert.equal(await metaStatus(acmeMeta, ACME_APP_SECRET, wamid), 200);
      const { leadId } = await h.submit(globexMeta.apiKey, { phone: uniquePhone() });
      const [created] = await createFirstContactTurns(h.app.db.pool, [
        { leadId, provider: 'meta', body: 'Hi {{1}}', variables: ['Ada'] },
      ]);
      const { turn, message } = created!;
      await record(h.app.db.pool, [
        {
          provider: 'meta',
          providerMessageId: wamid,
          messageId: message.id,
          turnId: turn.id,
          leadId,
          actor: 'system',
          data: { messageId: message.id },
        },
      ]);
      const after = await snapshot(leadId);
      assert.equal(after.lead[0].status, 'in_conversation', 'not handed to a person');
      assert.deepEqual(
        after.messages.map((m) => [m.status, m.provider_message_id]),
        [['accepted', wamid]],
      );
      assert.deepEqual(
        after.timeline.map((e) => e.type),
        ['lead.created', 'message.sent'],
      );
      const [held] = await query(
        'SELECT count(*)::int AS n FROM whatsapp_early_statuses WHERE provider_message_id = $1 AND workspace_id = $2',
        [wamid, acmeMeta.workspaceId],
      );
      assert.equal(held.n, 1, "acme's held status is not taken by globex's send");
    }
  });
});

describe('the keys we hand the provider, and provider ids', () => {
  it("every message gets a random key, not one made from its turn (first contacts, replies, operators')", async () => {
    const a = await sentLead(globex);
    const b = await sentLead(globex);
    const [lead] = await query('SELECT phone_normalized FROM leads WHERE id = $1', [a.leadId]);
    await h.leadSays('twilio', globex.slug, lead.phone_normalized, 'Yes, I own the house.');
    await h.settle();
    await query(`UPDATE leads SET status = 'needs_human' WHERE id = $1`, [a.leadId]);
    const op = await makeOperator(h.app, [{ workspaceId: globex.workspaceId, role: 'agent' }]);
    const session = (await signIn(h.app.http, op.email, op.password)).session!;
    const url = `/api/admin/workspaces/${globex.slug}/leads/${a.leadId}/reply`;
    assert.equal((await admin(h.app.http, session, 'POST', url, { text: 'Sam here.' })).status, 200);
    await h.settle();
    const rows = await query(
      `SELECT t.kind, m.idempotency_key AS key FROM whatsapp_messages m JOIN agent_turns t ON t.id = m.turn_id
        WHERE m.lead_id = ANY($1::uuid[]) AND m.direction = 'outbound' ORDER BY m.id`,
      [[a.leadId, b.leadId]],
    );
    assert.deepEqual(
      rows.map((r) => r.kind),
      ['first_contact', 'first_contact', 'reply', 'operator'],
    );
    for (const r of rows) assert.match(r.key, /^wa-[0-9a-f]{32}$/);
    assert.equal(new Set(rows.map((r) => r.key)).size, rows.length);
    const callbacks = h.twilio.messages.filter((m) => m.params.StatusCallback?.includes(a.key));
    assert.equal(callbacks.length, 1, "the StatusCallback URL carries the message's key");
  });

  it('a status with another provider id never rewrites the one recorded', async () => {
    const own = await sentLead(globex);
    const before = await snapshot(own.leadId);
    // globex's own, correctly signed callback: its key, another message id, a failure.
    assert.equal(await twilioStatus(globex, h.twilio.authToken, failed(attackerSid(4)), own.key), 204);
    const after = await snapshot(own.leadId);
    assert.deepEqual(after.messages, before.messages, 'status and provider id kept');
    assert.deepEqual(after.lead, before.lead);
    assert.deepEqual(
      after.timeline.slice(before.timeline.length).map((e) => e.type),
      ['message.duplicate_send'],
    );
  });

  it("a send not recorded yet takes its own status's id, never one another workspace's message has", async () => {
    const victim = await sentLead(await h.workspace('twilio'));
    const own = await sentLead(globex);
    // `own` stands for a message whose acceptance a crash kept us from recording.
    await query(`UPDATE whatsapp_messages SET provider_message_id = NULL, status = 'pending' WHERE id = $1`, [
      own.messageId,
    ]);
    const victimBefore = await snapshot(victim.leadId);
    const ownBefore = await snapshot(own.leadId);
    // Another workspace's message id under our own key: nothing written, and no error.
    assert.equal(await twilioStatus(globex, h.twilio.authToken, sent(victim.pmid), own.key), 204);
    assert.deepEqual(await snapshot(own.leadId), ownBefore);
    assert.deepEqual(await snapshot(victim.leadId), victimBefore);
    // Its own status records its id, as before.
    assert.equal(await twilioStatus(globex, h.twilio.authToken, sent(own.pmid), own.key), 204);
    const [m] = await query('SELECT status, provider_message_id FROM whatsapp_messages WHERE id = $1', [own.messageId]);
    assert.deepEqual(m, { status: 'sent', provider_message_id: own.pmid });
  });
});
