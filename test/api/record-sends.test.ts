import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recordAcceptedSend, recordAcceptedSends, type AcceptedSend } from '../../src/whatsapp/delivery-status.ts';
import { createFirstContactTurns } from '../../src/whatsapp/turn-queries.ts';
import { uniquePhone } from '../helpers/http.ts';
import { flushTableCounts, insertBulkLeads } from '../helpers/table-growth.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// The accepted sends of a batch of first contacts, recorded together by one statement
// (whatsapp_record_sends: migrations/025, by set since 030, one path since 043) must write exactly
// what recording each send on its own (a batch of one, recordAcceptedSend) writes: the comparisons
// below check it field by field, for leads that move into their conversation and leads that do
// not, for a status held before the recording, and for a status already applied by our key.

let h: WhatsappHarness;
let w: { apiKey: string; workspaceId: string };
let seq = 0;

before(async () => {
  h = await startWhatsappHarness({ startRelay: false });
  w = await h.workspace('twilio');
});
after(() => h.close());

/** Leads with a stored, unsent first contact each; the first `needsHuman` of them already with a person. */
async function pendingSends(n: number, needsHuman = 0): Promise<AcceptedSend[]> {
  const leads = [];
  for (let i = 0; i < n; i++) leads.push(await h.submit(w.apiKey, { phone: uniquePhone() }));
  const ids = leads.map((l) => l.leadId);
  await h.app.db.pool.query(`UPDATE leads SET status = 'needs_human' WHERE id = ANY($1::uuid[])`, [
    ids.slice(0, needsHuman),
  ]);
  const created = await createFirstContactTurns(
    h.app.db.pool,
    ids.map((leadId) => ({ leadId, provider: 'twilio' as const, body: 'Hi {{1}}', variables: ['x'] })),
  );
  return created.map(({ turn, message }, i) => ({
    provider: 'twilio',
    providerMessageId: `SMrec${++seq}`,
    messageId: message.id,
    turnId: turn.id,
    leadId: ids[i]!,
    actor: 'system',
    data: { messageId: message.id, turnId: turn.id, kind: 'template', actor: 'agent' },
  }));
}

/** What a recording left for each send: message, turn, lead and its timeline since the lead was created. */
async function written(sends: AcceptedSend[]) {
  const out = [];
  for (const s of sends) {
    const {
      rows: [m],
    } = await h.app.db.pool.query('SELECT status, provider_message_id FROM whatsapp_messages WHERE id = $1', [
      s.messageId,
    ]);
    const {
      rows: [t],
    } = await h.app.db.pool.query('SELECT state FROM agent_turns WHERE id = $1', [s.turnId]);
    const {
      rows: [l],
    } = await h.app.db.pool.query('SELECT status FROM leads WHERE id = $1', [s.leadId]);
    const { rows: events } = await h.app.db.pool.query(
      `SELECT type, data - 'messageId' - 'turnId' AS data FROM lead_events
        WHERE lead_id = $1 AND type <> 'lead.created' ORDER BY id`,
      [s.leadId],
    );
    out.push({
      message: m.status,
      pmidKept: m.provider_message_id === s.providerMessageId,
      turn: t.state,
      lead: l.status,
      events,
    });
  }
  return out;
}

describe('recording a batch of accepted sends', () => {
  it('writes what recording each send on its own writes: leads moved or not, messages, turns, timeline', async () => {
    const together = await pendingSends(4, 1);
    const alone = await pendingSends(4, 1);
    const movedTogether = await recordAcceptedSends(h.app.db.pool, together);
    const movedAlone = [];
    for (const s of alone) movedAlone.push(await recordAcceptedSend(h.app.db.pool, s));
    assert.deepEqual(movedTogether, [null, 'new', 'new', 'new']);
    assert.deepEqual(movedTogether, movedAlone);
    const a = await written(together);
    assert.deepEqual(a, await written(alone));
    assert.deepEqual(a[0], {
      message: 'accepted',
      pmidKept: true,
      turn: 'sent',
      lead: 'needs_human',
      events: [{ type: 'message.sent', data: { kind: 'template', actor: 'agent' } }],
    });
    assert.deepEqual(a[1]!.events, [
      { type: 'message.sent', data: { kind: 'template', actor: 'system', from: 'new', to: 'in_conversation' } },
    ]);
    assert.equal(a[1]!.lead, 'in_conversation');
  });

  it('a status that arrived before the recording is applied after its send is recorded, as on its own', async () => {
    const together = await pendingSends(3);
    const alone = await pendingSends(3);
    for (const batch of [together, alone]) {
      await h.app.db.pool.query(
        `INSERT INTO whatsapp_early_statuses
           (workspace_id, livemode, provider, provider_message_id, status, error_code, error_message)
         VALUES ($2, true, 'twilio', $1, 'failed', '63016', 'window closed')`,
        [batch[1]!.providerMessageId, w.workspaceId],
      );
    }
    const movedTogether = await recordAcceptedSends(h.app.db.pool, together);
    const movedAlone = [];
    for (const s of alone) movedAlone.push(await recordAcceptedSend(h.app.db.pool, s));
    assert.deepEqual(movedTogether, movedAlone);
    const a = await written(together);
    assert.deepEqual(a, await written(alone));
    assert.equal(a[1]!.message, 'failed');
    assert.equal(a[1]!.lead, 'needs_human', 'the failed delivery handed the lead to a person');
    assert.deepEqual(
      a[1]!.events.map((e: { type: string }) => e.type),
      ['message.sent', 'conversation.escalated'],
    );
    const { rows } = await h.app.db.pool.query(
      'SELECT count(*)::int AS n FROM whatsapp_early_statuses WHERE provider_message_id = $1',
      [together[1]!.providerMessageId],
    );
    assert.equal(rows[0].n, 0, 'the held status was taken');
  });

  it('a status applied before the recording (found by our key) is not moved back to accepted', async () => {
    const [s] = await pendingSends(1);
    await h.app.db.pool.query(
      `UPDATE whatsapp_messages SET status = 'delivered', provider_message_id = $2 WHERE id = $1`,
      [s!.messageId, s!.providerMessageId],
    );
    const [other] = await pendingSends(1);
    await recordAcceptedSends(h.app.db.pool, [s!, other!]);
    const [a, b] = await written([s!, other!]);
    assert.equal(a!.message, 'delivered');
    assert.equal(b!.message, 'accepted');
  });
});

describe('a batch recorded by one statement per table (migrations/030)', () => {
  // Each statement on leads, lead_events or whatsapp_messages runs those tables' statement-level
  // triggers (the funnel's, the live pages', the outbound webhooks' capture) once, whatever the
  // number of rows: a batch's sends are written by one statement per table, counted here by one
  // more such trigger on each.
  it(
    'runs one UPDATE of leads, one of whatsapp_messages and one ' + 'INSERT into lead_events for the whole batch',
    async () => {
      const sends = await pendingSends(5, 1);
      await h.app.db.pool.query(`CREATE TABLE record_statements (tbl text NOT NULL, op text NOT NULL);
      CREATE FUNCTION count_record_statements() RETURNS trigger LANGUAGE plpgsql AS $f$
        BEGIN INSERT INTO record_statements VALUES (TG_TABLE_NAME, TG_OP); RETURN NULL; END $f$;
      CREATE TRIGGER count_leads AFTER UPDATE ON leads FOR EACH STATEMENT EXECUTE FUNCTION count_record_statements();
      CREATE TRIGGER count_messages AFTER UPDATE
      ON whatsapp_messages FOR EACH STATEMENT EXECUTE FUNCTION count_record_statements();
      CREATE TRIGGER count_events AFTER INSERT
      ON lead_events FOR EACH STATEMENT EXECUTE FUNCTION count_record_statements();`);
      try {
        assert.deepEqual(await recordAcceptedSends(h.app.db.pool, sends), [null, 'new', 'new', 'new', 'new']);
        const { rows } = await h.app.db.pool.query(
          'SELECT tbl, op, count(*)::int AS n FROM record_statements GROUP BY 1, 2 ORDER BY 1, 2',
        );
        assert.deepEqual(rows, [
          { tbl: 'lead_events', op: 'INSERT', n: 1 },
          { tbl: 'leads', op: 'UPDATE', n: 1 },
          { tbl: 'whatsapp_messages', op: 'UPDATE', n: 1 },
        ]);
      } finally {
        await h.app.db.pool.query(`DROP TRIGGER count_leads ON leads; DROP TRIGGER count_messages ON whatsapp_messages;
        DROP TRIGGER count_events
        ON lead_events; DROP FUNCTION count_record_statements(); DROP TABLE record_statements;`);
      }
    },
  );

  // Since migrations/043 there is no send-by-send fallback: the second send is in a later wave of
  // the same set statements.
  it("a batch naming one lead twice is recorded in two waves: the second send sees the first's move", async () => {
    const pair = async () => {
      const [first] = await pendingSends(1);
      // A lead has one open turn at a time (agent_turns_one_open): the first one's is closed here.
      await h.app.db.pool.query(`UPDATE agent_turns SET state = 'sent' WHERE id = $1`, [first!.turnId]);
      const [again] = await createFirstContactTurns(h.app.db.pool, [
        { leadId: first!.leadId, provider: 'twilio', body: 'Hi {{1}}', variables: ['x'] },
      ]);
      const second: AcceptedSend = {
        ...first!,
        providerMessageId: `SMrec${++seq}`,
        messageId: again!.message.id,
        turnId: again!.turn.id,
        data: { messageId: again!.message.id, turnId: again!.turn.id, kind: 'template', actor: 'agent' },
      };
      return [first!, second];
    };
    const together = await pair();
    const alone = await pair();
    // A failure held for the first send: applied between the two sends, as each on its own would.
    for (const [first] of [together, alone]) {
      await h.app.db.pool.query(
        `INSERT INTO whatsapp_early_statuses
           (workspace_id, livemode, provider, provider_message_id, status, error_code, error_message)
         VALUES ($2, true, 'twilio', $1, 'failed', '30008', 'unknown')`,
        [first!.providerMessageId, w.workspaceId],
      );
    }
    const movedTogether = await recordAcceptedSends(h.app.db.pool, together);
    const movedAlone = [];
    for (const s of alone) movedAlone.push(await recordAcceptedSend(h.app.db.pool, s));
    assert.deepEqual(movedTogether, ['new', null]);
    assert.deepEqual(movedTogether, movedAlone);
    const a = await written(together);
    assert.deepEqual(a, await written(alone));
    assert.deepEqual(
      a[1]!.events.map((e: { type: string; data: Record<string, unknown> }) => [e.type, e.data.from ?? null]),
      [
        ['message.sent', 'new'],
        ['message.failed', null],
        ['message.sent', null],
      ],
    );
  });
});

describe('the batch recording on a table of some thousands of leads (migrations/026)', () => {
  // Migration 025 locked the batch's leads with `id IN (SELECT … FROM jsonb_array_elements(…))`.
  // PostgreSQL guesses such a set at 100 rows, so on a table of some thousands of leads — with
  // fresh statistics — it planned a scan of every lead for each batch. `= ANY(ARRAY(…))` is planned
  // as look-ups in the primary key.
  it("looks the batch's leads up by id instead of reading every lead", async () => {
    await insertBulkLeads(h.app.db.pool, w.workspaceId, 1, 3000);
    await h.app.db.pool.query('ANALYZE leads');
    const sends = await pendingSends(2);
    const client = await h.app.db.pool.connect();
    try {
      const leadsRead = async () => {
        await flushTableCounts(client);
        const { rows } = await h.app.db.pool.query(
          `SELECT seq_tup_read::float8 AS n FROM pg_stat_user_tables WHERE relid = 'leads'::regclass`,
        );
        return rows[0].n as number;
      };
      const before = await leadsRead();
      assert.deepEqual(await recordAcceptedSends(client, sends), ['new', 'new']);
      const read = (await leadsRead()) - before;
      assert.ok(read < 1_000, `recording two sends read ${read} leads by scanning the table`);
    } finally {
      client.release();
    }
  });
});
