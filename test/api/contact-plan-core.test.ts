import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ContactPlanService, type Attempt } from '../../src/contact-plan/contact-plan-service.ts';
import { endPlan, readPlan, scheduleStep } from '../../src/contact-plan/contact-plan-queries.ts';
import { insertInbound } from '../../src/whatsapp/message-queries.ts';
import { pendingStep, timeline } from '../helpers/contact-plan-harness.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// The contact plan's core (docs/FOLLOW-UP.md): a step runs only while it stands, every stop
// condition ends the plan in the transaction of the change, the calling window moves a step, and a
// plan that runs out hands the lead to a person. The channels' attempts are tested with them; here
// a recording attempter stands in for them.

const HOUR = 3_600_000;
let app: TestApp;
let clock: TestClock;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
const made: Attempt[] = [];
let plans: ContactPlanService;

before(async () => {
  clock = new TestClock(Date.now());
  app = await startTestApp({ clock });
  ws = await app.createWorkspace('whatsapp');
  // A window open all day every day, unless a test sets another; the workspace zone is UTC.
  await setPlan({ window: { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' } });
  plans = new ContactPlanService({
    pool: app.db.pool,
    log: app.log,
    clock: clock.read,
    attempters: { whatsapp: { attempt: async (a) => void made.push(a) } },
  });
});
after(() => app.close());

async function setPlan(contactPlan: Record<string, unknown>): Promise<void> {
  await app.db.pool.query(
    `UPDATE workspaces SET agent = jsonb_build_object('persona',
       jsonb_build_object('agentName', 'Alex', 'company', 'Acme', 'offer', 'a consultation', 'tone', 'brief'),
       'criteria', '', 'timeZone', 'UTC', 'questions', '[]'::jsonb, 'contactPlan', $2::jsonb) WHERE id = $1`,
    [ws.workspaceId, JSON.stringify(contactPlan)],
  );
}

async function newLead(phone?: string): Promise<string> {
  const r = await postLead(app.http, ws.apiKey, validLead(phone ? { phone } : {}));
  assert.equal(r.status, 201);
  return r.body.leadId;
}

async function status(leadId: string): Promise<string> {
  return (await app.db.pool.query('SELECT status FROM leads WHERE id = $1', [leadId])).rows[0].status;
}

test('a due step is marked in flight and handed to its channel; a stale step does nothing', async () => {
  const lead = await newLead();
  const step = (await scheduleStep(app.db.pool, lead, {
    kind: 'template',
    at: clock.read(),
    reason: 'first follow-up',
  }))!;
  assert.equal(await plans.run(lead, step - 1), 'superseded');
  made.length = 0;
  assert.equal(await plans.run(lead, step), 'attempted');
  assert.equal(made.length, 1);
  assert.equal(made[0]!.kind, 'template');
  assert.equal(made[0]!.resumed, false);
  assert.ok((await readPlan(app.db.pool, lead))!.inFlightSince, 'marked in flight');
  // The same job again (a worker killed mid-attempt): the channel is told it may have been made.
  assert.equal(await plans.run(lead, step), 'attempted');
  assert.equal(made[1]!.resumed, true);
  const scheduled = await timeline(app, lead, ['contact.scheduled']);
  assert.equal(scheduled[0]!.data.reason, 'first follow-up');
});

test('a job that runs early is queued again for its time', async () => {
  const lead = await newLead();
  const step = (await scheduleStep(app.db.pool, lead, {
    kind: 'template',
    at: new Date(clock.now + HOUR),
    reason: 'x',
  }))!;
  assert.equal(await plans.run(lead, step), 'early');
  const { rows } = await app.db.pool.query(
    `SELECT start_after FROM outbox
      WHERE queue = 'contact-attempt' AND payload->>'leadId' = $1 ORDER BY id DESC LIMIT 1`,
    [lead],
  );
  assert.equal(rows[0].start_after.getTime(), clock.now + HOUR);
  // The relay hands the wait to pg-boss: the job is held until the step is due.
  await app.relay.drain();
  const jobs = await app.db.pool.query(
    `SELECT start_after FROM pgboss.job WHERE name = 'contact-attempt' AND data->>'leadId' = $1 ORDER BY start_after`,
    [lead],
  );
  assert.deepEqual(
    jobs.rows.map((r) => r.start_after.getTime()),
    [clock.now + HOUR, clock.now + HOUR],
  );
});

test('every stop condition ends the plan and cancels the pending attempt in the same transaction', async () => {
  const cases: [string, (lead: string) => Promise<unknown>][] = [
    ['booked', (l) => app.db.pool.query(`UPDATE leads SET status = 'booked' WHERE id = $1`, [l])],
    ['unqualified', (l) => app.db.pool.query(`UPDATE leads SET status = 'unqualified' WHERE id = $1`, [l])],
    ['needs_human', (l) => app.db.pool.query(`UPDATE leads SET status = 'needs_human' WHERE id = $1`, [l])],
    [
      'replied',
      (l) =>
        insertInbound(app.db.pool, {
          leadId: l,
          provider: 'twilio',
          providerMessageId: `SM${l}`,
          text: 'hi',
          receivedAt: clock.read(),
        }),
    ],
    [
      'do_not_contact',
      async (l) => {
        const { rows } = await app.db.pool.query('SELECT phone_normalized FROM leads WHERE id = $1', [l]);
        await app.db.pool.query(
          `INSERT INTO suppressed_numbers (workspace_id, phone_e164, source) VALUES ($1, $2, 'api')`,
          [ws.workspaceId, rows[0].phone_normalized],
        );
      },
    ],
  ];
  for (const [reason, stop] of cases) {
    const lead = await newLead();
    const step = (await scheduleStep(app.db.pool, lead, { kind: 'template', at: clock.read(), reason: 'x' }))!;
    await stop(lead);
    assert.equal(await pendingStep(app, lead), null, reason);
    const ended = await timeline(app, lead, ['contact.plan_ended']);
    assert.equal(ended.length, 1, reason);
    assert.equal(ended[0]!.data.reason, reason);
    assert.deepEqual(Object.keys(ended[0]!.data.cancelled as object).sort(), ['at', 'kind'], reason);
    made.length = 0;
    assert.equal(await plans.run(lead, step), 'superseded', reason);
    assert.equal(made.length, 0, `${reason}: no attempt after the stop`);
  }
});

test('an opt-out puts the number on the do-not-contact list; a deleted lead takes its plan with it', async () => {
  const lead = await newLead();
  await scheduleStep(app.db.pool, lead, { kind: 'template', at: clock.read(), reason: 'x' });
  await app.db.pool.query(`UPDATE leads SET opted_out_at = now() WHERE id = $1`, [lead]);
  const { rows } = await app.db.pool.query(
    `SELECT s.source FROM suppressed_numbers s
       JOIN leads l ON l.phone_normalized = s.phone_e164 AND l.workspace_id = s.workspace_id WHERE l.id = $1`,
    [lead],
  );
  assert.equal(rows[0]?.source, 'opt_out');
  assert.equal(await pendingStep(app, lead), null);

  const gone = await newLead();
  await scheduleStep(app.db.pool, gone, { kind: 'template', at: clock.read(), reason: 'x' });
  await app.db.pool.query('DELETE FROM leads WHERE id = $1', [gone]);
  assert.equal(await readPlan(app.db.pool, gone), null);
});

test('the kill switch ends every running plan of the workspace; the leads keep their status', async () => {
  const other = await app.createWorkspace('whatsapp');
  const otherLead = (await postLead(app.http, other.apiKey, validLead())).body.leadId as string;
  await scheduleStep(app.db.pool, otherLead, { kind: 'template', at: clock.read(), reason: 'x' });
  const a = await newLead();
  const b = await newLead();
  for (const l of [a, b]) await scheduleStep(app.db.pool, l, { kind: 'template', at: clock.read(), reason: 'x' });
  await app.db.pool.query('UPDATE workspaces SET agent_enabled = false WHERE id = $1', [ws.workspaceId]);
  try {
    for (const l of [a, b]) {
      assert.equal(await pendingStep(app, l), null);
      assert.equal(await status(l), 'new');
      assert.equal((await timeline(app, l, ['contact.plan_ended']))[0]!.data.reason, 'agent_off');
    }
    assert.ok(await pendingStep(app, otherLead), "another workspace's plan is untouched");
    // A step scheduled while the agent is off is ended when it comes due.
    const c = await newLead();
    const step = (await scheduleStep(app.db.pool, c, { kind: 'template', at: clock.read(), reason: 'x' }))!;
    assert.equal(await plans.run(c, step), 'ended');
  } finally {
    await app.db.pool.query('UPDATE workspaces SET agent_enabled = true WHERE id = $1', [ws.workspaceId]);
  }
});

test('a step due outside the calling window moves to the next opening; an operator step does not', async () => {
  await setPlan({ window: { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '09:00', end: '10:00' } });
  try {
    // A German number: the lead's zone is Europe/Berlin, whatever the workspace's.
    const lead = await newLead('+49 30 901820');
    const closed = nextOutside('Europe/Berlin', clock.now);
    const local = new TestClock(closed);
    const inWindow = new ContactPlanService({
      pool: app.db.pool,
      log: app.log,
      clock: local.read,
      attempters: { whatsapp: { attempt: async (x) => void made.push(x) } },
    });
    const step = (await scheduleStep(app.db.pool, lead, {
      kind: 'template',
      at: local.read(),
      reason: 'first follow-up',
    }))!;
    assert.equal(await inWindow.run(lead, step), 'moved');
    const moved = (await pendingStep(app, lead))!;
    assert.equal(
      new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' }).format(
        moved.at,
      ),
      '09:00',
    );
    assert.ok(moved.at.getTime() > closed);
    const byOperator = (await scheduleStep(app.db.pool, lead, {
      kind: 'template',
      at: local.read(),
      reason: 'call now',
      data: { byOperator: true },
    }))!;
    assert.equal(await inWindow.run(lead, byOperator), 'attempted');
    await endPlan(app.db.pool, lead, 'test');
  } finally {
    await setPlan({
      window: { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' },
    });
  }
});

test('a plan that runs out hands the lead to a person: "not reached after N attempts"', async () => {
  const lead = await newLead();
  await app.db.pool.query(
    `INSERT INTO contact_plans (lead_id, workspace_id, channel, attempts) VALUES ($1, $2, 'whatsapp', 3)`,
    [lead, ws.workspaceId],
  );
  const step = (await scheduleStep(app.db.pool, lead, { kind: 'give_up', at: clock.read(), reason: 'no answer' }))!;
  assert.equal(await plans.run(lead, step), 'exhausted');
  assert.equal(await status(lead), 'needs_human');
  const [escalated] = await timeline(app, lead, ['conversation.escalated']);
  assert.equal(escalated!.data.detail, 'not reached after 3 attempts');
  assert.equal(escalated!.data.reason, 'not_reached');
  assert.equal((await timeline(app, lead, ['contact.plan_ended']))[0]!.data.reason, 'not_reached');
});

/** An instant after `from` when it is 03:00 in `tz` (outside a 09:00–10:00 window). */
function nextOutside(tz: string, from: number): number {
  const f = new Intl.DateTimeFormat('en-GB', { timeZone: tz, hour: '2-digit', hourCycle: 'h23' });
  let t = from - (from % HOUR) + HOUR;
  while (f.format(t) !== '03') t += HOUR;
  return t;
}

test('a WhatsApp step in a workspace without WhatsApp settings hands the lead to a person, never hangs', async () => {
  const bare = await app.createWorkspace('whatsapp');
  await app.db.pool.query(`UPDATE workspaces SET agent = $2::jsonb WHERE id = $1`, [
    bare.workspaceId,
    JSON.stringify({
      persona: { agentName: 'A', company: 'B', offer: 'c', tone: 'd' },
      criteria: '',
      timeZone: 'UTC',
      questions: [],
      contactPlan: {
        window: { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' },
      },
    }),
  ]);
  const lead = (await postLead(app.http, bare.apiKey, validLead())).body.leadId as string;
  await app.db.pool.query(`DELETE FROM outbox WHERE payload->>'leadId' = $1`, [lead]);
  const step = (await scheduleStep(app.db.pool, lead, {
    kind: 'template',
    at: clock.read(),
    reason: 'x',
    data: { followUp: 1 },
  }))!;
  // The composed service, with the real WhatsApp attempter.
  assert.equal(await app.contactPlans.run(lead, step), 'attempted');
  assert.equal(await status(lead), 'needs_human');
  const [escalated] = await timeline(app, lead, ['conversation.escalated']);
  assert.match(String(escalated!.data.detail), /WhatsApp is not configured/);
  assert.equal(await pendingStep(app, lead), null);
});
