// Delivery statuses received together are applied by one statement (src/whatsapp/delivery-status.ts,
// migrations/022's whatsapp_apply_statuses), with what each status did the same as one at a time:
// later statuses win, repeats and older ones are stale, a status for a message we do not know yet
// waits for the send's recording, a failed delivery hands the lead to a person, and a status the
// database refuses fails alone.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DeliveryStatuses, type StatusItem } from '../../src/whatsapp/delivery-status.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

let h: WhatsappHarness;
let w: { apiKey: string; workspaceId: string };
let leads: SentLead[] = [];

interface SentLead {
  leadId: string;
  sid: string;
  key: string;
}

/** `n` new leads, each with its first message sent: its provider id and idempotency key. */
async function sentLeads(n: number): Promise<SentLead[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await h.submit(w.apiKey)).leadId);
  await h.settle();
  const out: SentLead[] = [];
  for (const leadId of ids) {
    const { rows } = await h.app.db.pool.query(
      `SELECT provider_message_id, idempotency_key
        FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'outbound'`,
      [leadId],
    );
    out.push({ leadId, sid: rows[0].provider_message_id, key: rows[0].idempotency_key });
  }
  return out;
}

before(async () => {
  h = await startWhatsappHarness();
  w = await h.workspace('twilio');
  leads = await sentLeads(4);
});
after(() => h?.close());

const item = (sid: string, status: StatusItem['status'], extra: Partial<StatusItem> = {}): StatusItem => ({
  workspaceId: w.workspaceId,
  livemode: true,
  provider: 'twilio',
  providerMessageId: sid,
  key: null,
  status,
  repaired: null,
  ...extra,
});

async function messageOf(leadId: string) {
  const { rows } = await h.app.db.pool.query(
    `SELECT status, error_code FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'outbound'`,
    [leadId],
  );
  return rows[0];
}
async function statusOf(leadId: string) {
  return (await h.app.db.pool.query('SELECT status FROM leads WHERE id = $1', [leadId])).rows[0].status;
}

it(
  'statuses of several messages, submitted together, are ' + 'applied in one statement in the order they arrived',
  async () => {
    const statuses = new DeliveryStatuses(h.app.db.pool);
    const [a, b, c] = leads;
    assert.equal((await messageOf(a!.leadId)).status, 'delivered', 'the simulator reported queued, sent, delivered');
    const results = await Promise.all([
      statuses.apply(item(a!.sid, 'read')),
      statuses.apply(item(b!.sid, 'sent')), // older than what we have: stale
      statuses.apply(item(a!.sid, 'delivered')), // arrived after read: stale
      statuses.apply(item(c!.sid, 'failed', { errorCode: '30008', errorMessage: 'Unknown error' })),
      statuses.apply(item('SMnotyetrecorded0000000000000000', 'sent')),
      statuses.apply(item(a!.sid, 'read')), // a repeat: stale
    ]);
    assert.deepEqual(results, [
      { kind: 'applied', leadId: a!.leadId },
      { kind: 'stale' },
      { kind: 'stale' },
      { kind: 'applied', leadId: c!.leadId },
      { kind: 'held' },
      { kind: 'stale' },
    ]);
    assert.equal((await messageOf(a!.leadId)).status, 'read');
    assert.equal((await messageOf(b!.leadId)).status, 'delivered');
    assert.deepEqual(await messageOf(c!.leadId), { status: 'failed', error_code: '30008' });
    // The lead's only message never arrived: a person picks the conversation up.
    assert.equal(await statusOf(c!.leadId), 'needs_human');
    const { rows } = await h.app.db.pool.query(
      `SELECT data FROM lead_events WHERE lead_id = $1 AND type = 'conversation.escalated'`,
      [c!.leadId],
    );
    assert.equal(rows[0].data.outcome, 'undelivered');
    const held = await h.app.db.pool.query(
      `SELECT status FROM whatsapp_early_statuses WHERE provider_message_id = 'SMnotyetrecorded0000000000000000'`,
    );
    assert.deepEqual(held.rows, [{ status: 'sent' }]);
  },
);

it('a status the database refuses fails alone; the others of its statement are applied', async () => {
  const statuses = new DeliveryStatuses(h.app.db.pool);
  const d = leads[3]!;
  const b = leads[1]!;
  const results = await Promise.allSettled([
    statuses.apply(item(d.sid, 'read')),
    // A NUL cannot be stored in text: the provider boundary removes it (src/shared/storable-text.ts);
    // here it stands for any item whose data PostgreSQL refuses.
    statuses.apply(item(b.sid, 'failed', { errorCode: '30008', errorMessage: 'bad\u0000byte' })),
  ]);
  assert.equal(results[0].status, 'fulfilled');
  assert.deepEqual((results[0] as PromiseFulfilledResult<unknown>).value, { kind: 'applied', leadId: d.leadId });
  assert.equal(results[1].status, 'rejected');
  assert.equal((await messageOf(d.leadId)).status, 'read');
  assert.equal((await messageOf(b.leadId)).status, 'delivered', 'the refused status changed nothing');
});

it(
  'statuses about different messages are applied by one UPDATE ' + 'for the batch (migrations/031, one path since 044)',
  async () => {
    // Each UPDATE statement of whatsapp_messages runs its statement-level trigger (the live pages')
    // once: counted here by one more such trigger. A status about a message another status of the
    // batch is also about waits for a later wave of the same statements.
    const fresh = await sentLeads(4);
    await h.app.db.pool.query(`CREATE TABLE message_updates (at timestamptz NOT NULL DEFAULT now());
    CREATE FUNCTION count_message_updates() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN
    INSERT INTO message_updates DEFAULT VALUES; RETURN NULL; END $f$;
    CREATE TRIGGER count_message_updates AFTER UPDATE
    ON whatsapp_messages FOR EACH STATEMENT EXECUTE FUNCTION count_message_updates();`);
    const updates = async () =>
      (await h.app.db.pool.query('SELECT count(*)::int AS n FROM message_updates')).rows[0].n as number;
    try {
      const statuses = new DeliveryStatuses(h.app.db.pool);
      const [a, b, c, d] = fresh;
      assert.deepEqual(
        await Promise.all([a!, b!, c!].map((l) => statuses.apply(item(l.sid, 'read')))),
        [a!, b!, c!].map((l) => ({ kind: 'applied', leadId: l.leadId })),
      );
      assert.equal(await updates(), 1, 'three read receipts: one UPDATE');
      for (const l of [a!, b!, c!]) assert.equal((await messageOf(l.leadId)).status, 'read');

      // Two statuses of one message in a batch keep their order: the first applied, the repeat stale.
      const before = await updates();
      assert.deepEqual(
        await Promise.all([
          statuses.apply(item(d!.sid, 'delivered')),
          statuses.apply(item(d!.sid, 'read')),
          statuses.apply(item(d!.sid, 'read')),
        ]),
        [{ kind: 'stale' }, { kind: 'applied', leadId: d!.leadId }, { kind: 'stale' }],
      );
      assert.equal(
        (await updates()) - before,
        1,
        'the one status applied: one UPDATE; the waves with nothing to write ran none',
      );
      assert.equal((await messageOf(d!.leadId)).status, 'read');
    } finally {
      await h.app.db.pool.query(
        'DROP TRIGGER count_message_updates ON whatsapp_messages; DROP ' +
          'FUNCTION count_message_updates(); DROP TABLE message_updates;',
      );
    }
  },
);

it(
  'in a batch, a status under our key with another provider id is a ' +
    'duplicate send, and one for a send not yet recorded records its id',
  async () => {
    // Neither only moves its message forward: the first writes the timeline, the second the provider id.
    const [dup, unrecorded] = await sentLeads(2);
    await h.app.db.pool.query(
      `UPDATE whatsapp_messages SET provider_message_id = NULL,
      status = 'accepted' WHERE lead_id = $1 AND direction = 'outbound'`,
      [unrecorded!.leadId],
    );
    const statuses = new DeliveryStatuses(h.app.db.pool);
    assert.deepEqual(
      await Promise.all([
        statuses.apply(item('SMsecondcopy00000000000000000000', 'read', { key: dup!.key })),
        statuses.apply(item(unrecorded!.sid, 'read', { key: unrecorded!.key })),
      ]),
      [
        { kind: 'applied', leadId: dup!.leadId },
        { kind: 'applied', leadId: unrecorded!.leadId },
      ],
    );
    assert.equal((await messageOf(dup!.leadId)).status, 'delivered', 'the first copy keeps its own status');
    const { rows } = await h.app.db.pool.query(
      `SELECT data->>'status' AS status FROM lead_events WHERE lead_id = $1 AND type = 'message.duplicate_send'`,
      [dup!.leadId],
    );
    assert.deepEqual(rows, [{ status: 'read' }]);
    const {
      rows: [m],
    } = await h.app.db.pool.query(
      `SELECT status, provider_message_id FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'outbound'`,
      [unrecorded!.leadId],
    );
    assert.deepEqual(m, { status: 'read', provider_message_id: unrecorded!.sid });
  },
);
