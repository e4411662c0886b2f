import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { migrate, readMigrations } from '../../src/db/migrate.ts';
import { createPool } from '../../src/db/pool.ts';
import { recordDispatchedCall } from '../../src/leads/lead-queries.ts';
import {
  endOfCallReportMessage,
  statusUpdateMessage,
  type VapiCall,
} from '../../src/simulators/vapi/vapi-sim-messages.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { insertLead } from '../helpers/agent-harness.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { adminUrl } from '../helpers/test-db.ts';
import {
  deliver,
  startVoiceHarness,
  voiceWorkspace,
  type VoiceHarness,
  type VoiceWorkspace,
} from '../helpers/voice-harness.ts';

// The Analytics page tells the truth (docs/DASHBOARD.md, "Analytics"): a voice call counts as a
// first contact (and has a speed to lead) whatever order its server messages arrive in, before
// or after its call session is recorded, and a call picked up is a conversation even when its
// report comes before its in-progress update. The messages are the Vapi simulator's, delivered to
// the real webhook route with the workspace's secret. Then the split of outcomes by who reached
// them, the inbox filters the page links to, and migration 042's backfill of existing leads.

let h: VoiceHarness;
let owner: AdminSession;
const workspaces: VoiceWorkspace[] = [];
const dayOffset = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const PERIOD = `period=custom&from=${dayOffset(-1)}&to=${dayOffset(1)}`;

/** A workspace of its own per scenario, so its funnel is that one call's. */
async function workspace(): Promise<VoiceWorkspace> {
  const ws = await voiceWorkspace(h);
  workspaces.push(ws);
  const op = await makeOperator(h.app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
  owner = (await signIn(h.app.http, op.email, op.password)).session!;
  return ws;
}

before(async () => {
  h = await startVoiceHarness();
});
after(async () => {
  await h?.close();
});

type Step = 'ringing' | 'in-progress' | 'report' | 'report-unanswered' | 'session';

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((x, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((p) => [x, ...p]));
}

/** The session inserted at every position among the messages, for every order of the messages. */
function orders(messages: Step[]): Step[][] {
  return permutations(messages).flatMap((p) =>
    Array.from({ length: p.length + 1 }, (_, k) => [...p.slice(0, k), 'session' as const, ...p.slice(k)]),
  );
}

/** Plays one call's steps for a lead reserved as voice dispatch leaves it (new, no session). */
async function play(ws: VoiceWorkspace, steps: Step[]): Promise<string> {
  const leadId = await insertLead(h.app.db.pool, ws.workspaceId, { status: 'new' });
  const startedAt = new Date(h.clock.now).toISOString();
  const call = {
    id: crypto.randomUUID(),
    orgId: 'o',
    createdAt: startedAt,
    updatedAt: startedAt,
    type: 'outboundPhoneCall',
    status: 'queued',
    cost: 0,
    assistantOverrides: { metadata: { leadId, workspaceId: ws.workspaceId } },
  } as VapiCall;
  const send = (message: unknown) => deliver(h, ws.slug, message, { 'x-vapi-secret': ws.secret });
  const endedAt = new Date(h.clock.now + 60_000).toISOString();
  for (const step of steps) {
    let res;
    if (step === 'session') {
      // What voice dispatch does once Vapi accepted the call; a server message may have recorded it first.
      await recordDispatchedCall(h.app.db.pool, { leadId, providerCallId: call.id, callStatus: 'queued' }).catch(
        (err: { code?: string }) => assert.equal(err.code, '23505'),
      );
      continue;
    }
    if (step === 'ringing') res = await send(statusUpdateMessage(call, 'ringing', h.clock.now));
    if (step === 'in-progress')
      res = await send(statusUpdateMessage({ ...call, status: 'in-progress', startedAt }, 'in-progress', h.clock.now));
    if (step === 'report' || step === 'report-unanswered') {
      const answered = step === 'report';
      const report = {
        endedReason: answered ? 'customer-ended-call' : 'customer-did-not-answer',
        startedAt: answered ? startedAt : null,
        endedAt,
        messages: [],
        summary: null,
        recordingUrl: null,
        cost: 0,
      };
      const ended = { ...call, status: 'ended', ...(answered ? { startedAt } : {}), endedAt };
      res = await send(endOfCallReportMessage(ended, h.clock.now, report));
    }
    assert.equal(res?.status, 200, JSON.stringify(res?.body));
  }
  return leadId;
}

async function figures(ws: VoiceWorkspace) {
  const a = await admin(h.app.http, owner, 'GET', `/api/admin/workspaces/${ws.slug}/analytics?${PERIOD}`);
  assert.equal(a.status, 200, JSON.stringify(a.body));
  const inbox = await admin(h.app.http, owner, 'GET', `/api/admin/workspaces/${ws.slug}/leads`);
  assert.equal(inbox.status, 200, JSON.stringify(inbox.body));
  const speed = inbox.body.leads.map((l: { speedToLeadSeconds: number | null }) => l.speedToLeadSeconds);
  return { totals: a.body.totals, speed };
}

describe('a voice call counts as contacted, however its events arrived', () => {
  test('answered: every order of ringing, in-progress and the report, before or after the session exists', async () => {
    const all = orders(['ringing', 'in-progress', 'report']);
    assert.equal(all.length, 24);
    for (const steps of all) {
      const ws = await workspace();
      await play(ws, steps);
      const { totals, speed } = await figures(ws);
      const label = steps.join(' → ');
      assert.deepEqual([totals.leads, totals.contacted, totals.conversation], [1, 1, 1], label);
      assert.notEqual(totals.speedP50Seconds, null, `speed to lead on the Analytics page: ${label}`);
      assert.equal(speed.length, 1);
      assert.notEqual(speed[0], null, `speed to lead in the inbox: ${label}`);
    }
  });

  test('not answered: contacted, no conversation, in every order', async () => {
    for (const steps of orders(['ringing', 'report-unanswered'])) {
      const ws = await workspace();
      await play(ws, steps);
      const { totals, speed } = await figures(ws);
      assert.deepEqual([totals.leads, totals.contacted, totals.conversation], [1, 1, 0], steps.join(' → '));
      assert.notEqual(speed[0], null, steps.join(' → '));
    }
  });

  test('through dispatch: Vapi rings before its POST /call is answered, then plays the call', async () => {
    const ws = await workspace();
    h.vapi.setAutoPlay({ persona: 'books', ringBeforeAnswer: true });
    try {
      const res = await postLead(h.app.http, ws.apiKey, validLead({ email: 'ring@example.com' }));
      assert.equal(res.status, 201, JSON.stringify(res.body));
      await h.vapi.settled();
    } finally {
      h.vapi.setAutoPlay(null);
    }
    const { rows } = await h.app.db.pool.query(
      'SELECT type FROM lead_events e JOIN leads l ON l.id = e.lead_id WHERE l.workspace_id = $1',
      [ws.workspaceId],
    );
    assert.ok(
      rows.some((r) => r.type === 'call.reconciled'),
      'the ringing update came first and was reconciled',
    );
    const { totals, speed } = await figures(ws);
    assert.deepEqual([totals.leads, totals.contacted, totals.conversation, totals.booked], [1, 1, 1, 1]);
    assert.ok(totals.conversation <= totals.contacted);
    assert.notEqual(speed[0], null);
  });
});

describe('outcomes by the AI alone and after a person', () => {
  test('the split counts a take-over or hand-over in the history; each figure links to its leads', async () => {
    const ws = await workspace();
    const lead = async (status: string, steps: Array<[string, Record<string, unknown>]>) => {
      const id = await insertLead(h.app.db.pool, ws.workspaceId, { status: status as never });
      for (const [type, data] of steps) {
        await h.app.db.pool.query('INSERT INTO lead_events (lead_id, type, data) VALUES ($1, $2, $3)', [
          id,
          type,
          JSON.stringify(data),
        ]);
      }
      return id;
    };
    const sent: [string, Record<string, unknown>] = ['call.dispatched', {}];
    const aiBooked = await lead('booked', [
      sent,
      ['call.started', {}],
      ['booking.created', { to: 'booked', actor: 'agent' }],
    ]);
    const handedBooked = await lead('booked', [
      sent,
      ['call.started', {}],
      ['agent.escalated', { to: 'needs_human', actor: 'agent' }],
      ['operator.outcome_set', { to: 'booked', actor: 'operator' }],
    ]);
    const takenUnqualified = await lead('unqualified', [
      sent,
      ['operator.took_over', { to: 'needs_human', actor: 'operator' }],
      ['operator.outcome_set', { to: 'unqualified', actor: 'operator' }],
    ]);
    const aiUnqualified = await lead('unqualified', [
      sent,
      ['lead.unqualified', { to: 'unqualified', actor: 'agent' }],
    ]);
    const contacted = [aiBooked, handedBooked, takenUnqualified, aiUnqualified];
    const neverContacted = await lead('new', []);

    const a = await admin(h.app.http, owner, 'GET', `/api/admin/workspaces/${ws.slug}/analytics?${PERIOD}`);
    assert.equal(a.status, 200);
    assert.deepEqual(a.body.outcomes, { booked: { ai: 1, person: 1 }, unqualified: { ai: 1, person: 1 } });

    const ids = async (query: string) => {
      const r = await admin(h.app.http, owner, 'GET', `/api/admin/workspaces/${ws.slug}/leads?${query}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return (r.body.leads as Array<{ id: string }>).map((l) => l.id).sort();
    };
    const sorted = (...x: string[]) => x.sort();
    const period = `from=${dayOffset(-1)}&to=${dayOffset(1)}`;
    assert.deepEqual(await ids(`${period}&status=booked&handledBy=ai`), [aiBooked]);
    assert.deepEqual(await ids(`${period}&status=booked&handledBy=person`), [handedBooked]);
    assert.deepEqual(await ids(`${period}&status=unqualified&handledBy=person`), [takenUnqualified]);
    assert.deepEqual(await ids(`${period}&status=unqualified&handledBy=ai`), [aiUnqualified]);
    assert.deepEqual(await ids(`${period}&reached=contacted`), sorted(...contacted));
    assert.deepEqual(await ids(`${period}&reached=conversation`), sorted(aiBooked, handedBooked));
    assert.deepEqual(await ids(period), sorted(...contacted, neverContacted));
    // The period is the workspace's local days: a period that ended before today holds none of them.
    assert.deepEqual(await ids(`from=${dayOffset(-5)}&to=${dayOffset(-2)}`), []);
    assert.deepEqual(await ids(`from=${dayOffset(-1)}`), sorted(...contacted, neverContacted));
    assert.deepEqual(await ids(`to=${dayOffset(-2)}`), []);
    const bad = await admin(
      h.app.http,
      owner,
      'GET',
      `/api/admin/workspaces/${ws.slug}/leads?reached=all&from=2026-02-30`,
    );
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.issues.map((i: { path: string[] }) => i.path[0]).sort(), ['from', 'reached']);
  });
});

describe('a conversation counts only for a contacted lead', () => {
  test('a lead that wrote without being contacted is in no Conversation: page, days, by source, inbox', async () => {
    const ws = await workspace();
    // Created at noon three days ago in the workspace's time zone (a past day whatever the hour of
    // the run: its summary is written to analytics_days), and now.
    const created = (daysAgo: number) =>
      daysAgo === 0
        ? 'now()'
        : `(date_trunc('day', now() AT TIME ZONE (w.agent->>'timeZone')) - make_interval(days => ${daysAgo})
            + interval '12 hours') AT TIME ZONE (w.agent->>'timeZone')`;
    const lead = async (daysAgo: number, types: string[]) => {
      const { rows } = await h.app.db.pool.query(
        `INSERT INTO leads (workspace_id, name, phone, phone_normalized, consented_at, status, created_at, updated_at)
         SELECT w.id, 'Ada', $2, $2, now(), 'in_conversation', ${created(daysAgo)}, ${created(daysAgo)}
           FROM workspaces w WHERE w.id = $1
         RETURNING id, created_at`,
        [ws.workspaceId, `+4930${crypto.randomInt(1e6, 9e6)}`],
      );
      for (const [i, type] of types.entries()) {
        await h.app.db.pool.query(
          `INSERT INTO lead_events (lead_id, type, data, at)
           VALUES ($1, $2, '{}', $3::timestamptz + make_interval(secs => $4))`,
          [rows[0].id, type, rows[0].created_at, 10 * (i + 1)],
        );
      }
      return rows[0].id as string;
    };
    // Wrote first (its number on the do-not-contact list, or the first send failed): never contacted.
    const wroteOnlyPast = await lead(3, ['message.received']);
    const wroteOnlyToday = await lead(0, ['message.received']);
    const answeredPast = await lead(3, ['message.sent', 'message.received']);
    const answeredToday = await lead(0, ['message.sent', 'message.received']);
    const contactedOnly = await lead(0, ['message.sent']);

    const period = `from=${dayOffset(-5)}&to=${dayOffset(1)}`;
    const a = await admin(
      h.app.http,
      owner,
      'GET',
      `/api/admin/workspaces/${ws.slug}/analytics?period=custom&${period}`,
    );
    assert.equal(a.status, 200, JSON.stringify(a.body));
    const { totals } = a.body;
    assert.deepEqual([totals.leads, totals.contacted, totals.conversation], [5, 3, 2]);
    assert.ok(totals.conversation <= totals.contacted);
    for (const d of a.body.days as Array<{ day: string; contacted: number; conversation: number }>) {
      assert.ok(d.conversation <= d.contacted, `${d.day}: ${d.conversation} conversations, ${d.contacted} contacted`);
    }
    const { rows: local } = await h.app.db.pool.query(
      `SELECT ((created_at AT TIME ZONE (SELECT agent->>'timeZone' FROM workspaces WHERE id = $2))::date)::text AS day
         FROM leads WHERE id = $1`,
      [wroteOnlyPast, ws.workspaceId],
    );
    const pastDay = local[0].day as string;
    const past = a.body.days.find((d: { day: string }) => d.day === pastDay);
    assert.deepEqual([past.leads, past.contacted, past.conversation], [2, 1, 1]);
    const stored = await h.app.db.pool.query(
      `SELECT conversation FROM analytics_days WHERE workspace_id = $1 AND day = $2`,
      [ws.workspaceId, pastDay],
    );
    assert.deepEqual(
      stored.rows.map((r) => r.conversation),
      [1],
      'the past day was summarised with the same definition',
    );
    assert.deepEqual(
      a.body.bySource.map((s: { leads: number; contacted: number; conversation: number }) => [
        s.leads,
        s.contacted,
        s.conversation,
      ]),
      [[5, 3, 2]],
    );

    // The figure's link lists exactly the leads it counts.
    const ids = async (query: string) => {
      const r = await admin(h.app.http, owner, 'GET', `/api/admin/workspaces/${ws.slug}/leads?${query}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return (r.body.leads as Array<{ id: string }>).map((l) => l.id).sort();
    };
    const conversation = await ids(`${period}&reached=conversation&sandbox=false`);
    assert.deepEqual(conversation, [answeredPast, answeredToday].sort());
    assert.equal(conversation.length, totals.conversation);
    assert.ok(!conversation.includes(wroteOnlyPast) && !conversation.includes(wroteOnlyToday));
    assert.deepEqual(
      await ids(`${period}&reached=contacted&sandbox=false`),
      [answeredPast, answeredToday, contactedOnly].sort(),
    );
  });
});

describe('migration 042 on existing leads', () => {
  test('reconciled calls become contacts, answered calls conversations, a person stepping in is known', async () => {
    const adminPool = createPool(adminUrl(), 1);
    const name = `leadintake_mig42_${crypto.randomBytes(6).toString('hex')}`;
    await adminPool.query(`CREATE DATABASE ${name}`);
    const u = new URL(adminUrl());
    u.pathname = `/${name}`;
    const pool = createPool(u.toString(), 2);
    try {
      await migrate(
        pool,
        readMigrations().filter((m) => m.version < 42),
      );
      const wsId = (
        await pool.query(`INSERT INTO workspaces (slug, name, channel) VALUES ('v', 'v', 'voice') RETURNING id`)
      ).rows[0].id;
      const lead = async (status: string) =>
        (
          await pool.query(
            `INSERT INTO leads (workspace_id, name, phone, phone_normalized, consented_at, status, created_at)
         VALUES ($1, 'Ada', $2, $2, now(), $3, now() - interval '3 days') RETURNING id`,
            [wsId, `+4930${crypto.randomInt(1e6, 9e6)}`, status],
          )
        ).rows[0].id;
      const event = (id: string, type: string, data: Record<string, unknown>, minutes: number) =>
        pool.query(
          `INSERT INTO lead_events (lead_id, type, data, at)
         VALUES ($1, $2, $3, now() - interval '3 days' + make_interval(mins => $4))`,
          [id, type, JSON.stringify(data), minutes],
        );
      const reconciled = await lead('booked');
      await event(reconciled, 'call.reconciled', { to: 'in_conversation' }, 1);
      await event(reconciled, 'operator.took_over', { to: 'needs_human' }, 5);
      await event(reconciled, 'operator.outcome_set', { to: 'booked' }, 9);
      const reportFirst = await lead('in_conversation');
      await event(reportFirst, 'call.dispatched', {}, 2);
      await pool.query(
        `INSERT INTO call_sessions (lead_id, provider_call_id, status, started_at)
                        VALUES ($1, 'c1', 'ended', now() - interval '3 days' + interval '3 minutes')`,
        [reportFirst],
      );
      const before = (await pool.query('SELECT contacted_at FROM lead_funnel WHERE lead_id = $1', [reconciled]))
        .rows[0];
      assert.equal(before.contacted_at, null, 'before 042 a reconciled call was no contact');

      await migrate(pool, readMigrations());
      const { rows } = await pool.query(
        `SELECT lead_id, extract(epoch FROM contacted_at - created_at)::int AS contacted,
                extract(epoch FROM conversed_at - created_at)::int AS conversed,
                extract(epoch FROM human_at - created_at)::int AS human
           FROM lead_funnel WHERE lead_id = ANY($1::uuid[])`,
        [[reconciled, reportFirst]],
      );
      const by = Object.fromEntries(rows.map((r) => [r.lead_id, r]));
      assert.deepEqual([by[reconciled].contacted, by[reconciled].conversed, by[reconciled].human], [60, null, 300]);
      assert.deepEqual([by[reportFirst].contacted, by[reportFirst].conversed, by[reportFirst].human], [120, 180, null]);
      assert.equal((await pool.query('SELECT count(*)::int AS n FROM analytics_days')).rows[0].n, 0);
    } finally {
      await pool.end();
      await adminPool.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await adminPool.end();
    }
  });
});
