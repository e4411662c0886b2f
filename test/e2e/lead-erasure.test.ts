import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recordIntegrationEvent } from '../../src/integration-log/integration-log.ts';
import { getLeadDetails } from '../../src/leads/lead-details.ts';
import { eraseLead } from '../../src/leads/lead-erasure.ts';
import { postLead, uniquePhone, validLead } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';
import { runCli } from '../helpers/worker-process.ts';

// `leadintake lead show|delete` and the service functions behind them: a lead with a
// WhatsApp conversation, a queued turn, a call session, integration-log entries and parked
// delivery statuses is erased everywhere, an audit row without personal data remains, and the
// phone can be submitted again.

let h: WhatsappHarness;
let ws: { slug: string; apiKey: string; workspaceId: string };
let other: { slug: string; apiKey: string; workspaceId: string };

before(async () => {
  h = await startWhatsappHarness();
  ws = await h.workspace('twilio');
  other = await h.workspace('twilio');
});
after(async () => {
  await h?.close();
});

const query = async (sql: string, values: unknown[] = []) => (await h.app.db.pool.query(sql, values)).rows;
const cli = (...args: string[]) => runCli(args, h.workerEnv());

/** A lead in conversation: template sent, the lead answered, its answer's turn queued in pg-boss. */
async function leadInConversation(
  name: string,
  email: string,
  says = 'Hello, my roof faces south',
): Promise<{ leadId: string; phone: string; raw: string }> {
  const raw = uniquePhone();
  const { leadId, phone } = await h.submit(ws.apiKey, { phone: raw, name, email });
  await h.settle();
  await h.leadSays('twilio', ws.slug, phone, says);
  await h.app.relay.drain();
  return { leadId, phone, raw };
}

/** Every table, ours and pg-boss's, whose rows mention `needle` anywhere. */
async function tablesMentioning(needle: string): Promise<string[]> {
  const tables = await query(`SELECT table_schema, table_name FROM information_schema.tables
                               WHERE table_schema IN ('public', 'pgboss') AND table_type = 'BASE TABLE'`);
  const found: string[] = [];
  for (const t of tables) {
    const name = `"${t.table_schema}"."${t.table_name}"`;
    const [r] = await query(`SELECT count(*)::int AS n FROM ${name} x WHERE strpos(x::text, $1) > 0`, [needle]);
    if (r.n > 0) found.push(`${name}: ${r.n}`);
  }
  return found;
}

describe('lead show and lead delete', { concurrency: false }, () => {
  it('lead show prints status, timeline, messages, latest call and integration log; --json is one line', async () => {
    const { leadId, phone } = await leadInConversation('Grace Hopper', 'grace@example.com');
    await query(
      `INSERT INTO call_sessions (lead_id, provider_call_id,
        status, summary) VALUES ($1, $2, 'ended', 'Asked about batteries')`,
      [leadId, `call-${leadId}`],
    );
    const json = await cli('lead', 'show', leadId, '--json');
    assert.equal(json.code, 0, json.stderr);
    assert.match(json.stdout, /^[^\n]+\n$/);
    const d = JSON.parse(json.stdout);
    assert.equal(d.lead.id, leadId);
    assert.equal(d.lead.status, 'in_conversation');
    assert.equal(d.lead.phoneNormalized, phone);
    assert.equal(d.lead.workspaceSlug, ws.slug);
    assert.ok(d.timeline.some((e: { type: string }) => e.type === 'lead.created'));
    assert.deepEqual(
      d.messages.map((m: { direction: string }) => m.direction),
      ['outbound', 'inbound'],
    );
    assert.equal(d.messages[1].body, 'Hello, my roof faces south');
    assert.equal(d.latestCall.summary, 'Asked about batteries');
    assert.ok(
      d.integrationLog.length > 0 && d.integrationLog.every((e: { provider: string }) => e.provider === 'twilio'),
    );
    assert.deepEqual(d, JSON.parse(JSON.stringify(await getLeadDetails(h.app.db.pool, { leadId }))));

    const text = await cli('lead', 'show', leadId);
    assert.equal(text.code, 0, text.stderr);
    for (const want of [
      'Grace Hopper',
      'in_conversation',
      'lead.created',
      '← Hello, my roof faces south',
      'Latest call',
      'Integration log',
    ]) {
      assert.ok(text.stdout.includes(want), `${want} in:\n${text.stdout}`);
    }
    // The dashboard's scope: a lead of another workspace is not found.
    assert.equal(await getLeadDetails(h.app.db.pool, { leadId, workspaceId: other.workspaceId }), null);
  });

  it('lead delete erases the lead and everything about it; the phone can be submitted again', async () => {
    const name = 'Hedy Lamarr';
    const email = 'hedy.erase-me@example.com';
    const keep = await leadInConversation('Kept Lead', 'kept@example.com');
    const words = 'Our flat roof in Ulm has 42 square metres';
    const { leadId, phone, raw } = await leadInConversation(name, email, words);
    const digits = phone.replace(/\D/g, '');
    const [msg] = await query(
      `SELECT provider_message_id FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'outbound'`,
      [leadId],
    );
    // What other paths leave behind: a status parked for the lead's message, a Vapi tool call, a
    // call session, and a webhook logged before it could be matched to the lead (no lead_id).
    await query(
      `INSERT INTO whatsapp_early_statuses (provider, provider_message_id, status, workspace_id, livemode)
       VALUES ('twilio', $1, 'read', $2, true)`,
      [msg.provider_message_id, ws.workspaceId],
    );
    await query(
      `INSERT INTO call_sessions (lead_id, provider_call_id, status, transcript) VALUES ($1, $2, 'ended', $3)`,
      [leadId, `call-${leadId}`, `AI: Hi ${name}`],
    );
    await query(
      `INSERT INTO voice_tool_calls (workspace_id, tool_call_id, provider_call_id,
        lead_id, name, result) VALUES ($1, $2, $3, $4, 'bookConsult', $5)`,
      [ws.workspaceId, `tc-${leadId}`, `call-${leadId}`, leadId, `Booked for ${name}`],
    );
    await recordIntegrationEvent(h.app.db.pool, {
      provider: 'twilio',
      workspaceId: ws.workspaceId,
      direction: 'in',
      kind: 'inbound',
      outcome: 'unknown-lead',
      payload: { From: `whatsapp:${phone}` },
    });
    assert.equal(
      (
        await query(
          `SELECT count(*)::int AS n FROM pgboss.job
            WHERE name = 'agent-turn' AND state = 'created' AND data->>'leadId' = $1`,
          [leadId],
        )
      )[0].n,
      1,
      'a turn is queued',
    );
    assert.equal((await postLead(h.app.http, ws.apiKey, validLead({ phone: raw }))).status, 409);
    const sent = h.twilio.messages.filter((m) => m.to === phone).length;

    const del = await cli('lead', 'delete', leadId);
    assert.equal(del.code, 0, del.stderr);
    assert.match(del.stdout, new RegExp(`^Deleted lead ${leadId}`));

    // Nothing anywhere still names the lead's phone, name, e-mail or words; the lead id remains
    // only in the audit row and the emptied integration-log entries.
    for (const needle of [digits, name, email, words]) assert.deepEqual(await tablesMentioning(needle), [], needle);
    const logged = (await query('SELECT count(*)::int AS n FROM integration_events WHERE lead_id = $1', [leadId]))[0].n;
    assert.deepEqual((await tablesMentioning(leadId)).sort(), [
      '"public"."audit_events": 1',
      `"public"."integration_events": ${logged}`,
    ]);
    const log = await query('SELECT payload FROM integration_events WHERE lead_id = $1', [leadId]);
    assert.ok(log.length > 0 && log.every((r) => r.payload.erased === true));
    const [audit] = await query(
      'SELECT workspace_id, type, subject_id, actor, data, at FROM audit_events WHERE subject_id = $1',
      [leadId],
    );
    assert.equal(audit.type, 'lead.erased');
    assert.equal(audit.workspace_id, ws.workspaceId);
    assert.match(audit.actor, /^cli:./);
    assert.ok(audit.at instanceof Date);
    // Jobs: the first contact's (finished), the queued answer and the plan's follow-up.
    assert.deepEqual(audit.data, { messages: 2, callSessions: 1, integrationEntries: log.length + 1, jobs: 3 });

    // The other lead of the workspace is untouched.
    const kept = await getLeadDetails(h.app.db.pool, { leadId: keep.leadId });
    assert.ok(kept!.messages.some((m) => m.body === 'Hello, my roof faces south'));
    assert.ok(kept!.integrationLog.every((e) => !(e.payload as { erased?: boolean }).erased));

    // The queued turn is gone: nothing more is sent to the number.
    await h.settle({ ignoreBackoff: true });
    assert.equal(h.twilio.messages.filter((m) => m.to === phone).length, sent);

    // The phone is free again: a new lead, with a new id.
    const again = await postLead(h.app.http, ws.apiKey, validLead({ phone: raw }));
    assert.equal(again.status, 201, JSON.stringify(again.body));
    assert.notEqual(again.body.leadId, leadId);

    const twice = await cli('lead', 'delete', leadId);
    assert.equal(twice.code, 1);
    assert.equal(twice.stderr, `leadintake: No lead "${leadId}".\n`);
  });

  it('eraseLead keeps to the workspace it is given', async () => {
    const { leadId } = await h.submit(ws.apiKey, { phone: uniquePhone() });
    assert.deepEqual(
      await eraseLead(h.app.db.pool, { leadId, workspaceId: other.workspaceId, actor: 'operator:test' }),
      { erased: false },
    );
    assert.equal((await query('SELECT count(*)::int AS n FROM leads WHERE id = $1', [leadId]))[0].n, 1);
    assert.deepEqual(await eraseLead(h.app.db.pool, { leadId, workspaceId: ws.workspaceId, actor: 'operator:test' }), {
      erased: true,
    });
    assert.equal(
      (await query('SELECT actor FROM audit_events WHERE subject_id = $1', [leadId]))[0].actor,
      'operator:test',
    );
  });

  it('a lead migration 007 marked as a duplicate (`<E.164>#<id>`): its number is still found in the log', async () => {
    const { leadId, phone } = await h.submit(ws.apiKey, { phone: uniquePhone() });
    await query(`UPDATE leads SET phone_normalized = phone_normalized || '#' || id WHERE id = $1`, [leadId]);
    await recordIntegrationEvent(h.app.db.pool, {
      provider: 'meta',
      workspaceId: ws.workspaceId,
      direction: 'in',
      kind: 'webhook',
      payload: { wa_id: phone.slice(1) },
    });
    assert.deepEqual(await eraseLead(h.app.db.pool, { leadId, actor: 'operator:test' }), { erased: true });
    assert.deepEqual(await tablesMentioning(phone.slice(1)), []);
  });

  it('bad ids and unknown leads are one-line errors', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const [show, del, notId, usage] = await Promise.all([
      cli('lead', 'show', missing),
      cli('lead', 'delete', missing),
      cli('lead', 'show', 'abc'),
      cli('lead', 'frob'),
    ]);
    assert.equal(show.stderr, `leadintake: No lead "${missing}".\n`);
    assert.equal(del.stderr, `leadintake: No lead "${missing}".\n`);
    assert.equal(notId.stderr, 'leadintake: Not a lead id: "abc".\n');
    assert.match(usage.stderr, /^leadintake: Usage: leadintake lead show LEAD_ID \[--json\] \| lead delete LEAD_ID\n$/);
    for (const r of [show, del, notId, usage]) assert.equal(r.code, 1);
  });
});
