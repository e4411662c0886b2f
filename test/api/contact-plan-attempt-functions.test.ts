import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { recordAttempt, recordReached, scheduleStep } from '../../src/contact-plan/contact-plan-queries.ts';
import { insertInbound } from '../../src/whatsapp/message-queries.ts';
import { timeline } from '../helpers/contact-plan-harness.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// An attempt and a reach are written by one database function each (migrations/050): the voice
// path (recordAttempt, recordReached) and the WhatsApp triggers (a plan turn's send, a lead's
// message) call them, so their timeline entries have one shape and a lead is reached once.

let app: TestApp;
let clock: TestClock;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;

before(async () => {
  clock = new TestClock(Date.now());
  app = await startTestApp({ clock });
  ws = await app.createWorkspace('whatsapp');
});
after(() => app.close());

async function newLead(): Promise<string> {
  const r = await postLead(app.http, ws.apiKey, validLead());
  assert.equal(r.status, 201);
  return r.body.leadId;
}

/** A plan turn whose send (or skip) the trigger applies, as the WhatsApp send path records it. */
async function finishTurn(
  leadId: string,
  planOnSent: Record<string, unknown>,
  end: { state: 'sent' | 'failed'; outcome?: string; planStep?: number },
): Promise<void> {
  const { rows } = await app.db.pool.query(
    `INSERT INTO agent_turns (lead_id, kind, state, plan_on_sent, plan_step)
     VALUES ($1, 'follow_up', 'ready', $2, $3) RETURNING id`,
    [leadId, JSON.stringify(planOnSent), end.planStep ?? null],
  );
  await app.db.pool.query('UPDATE agent_turns SET state = $2, outcome = $3 WHERE id = $1', [
    rows[0].id,
    end.state,
    end.outcome ?? null,
  ]);
}

async function attempts(leadId: string): Promise<number | null> {
  const { rows } = await app.db.pool.query('SELECT attempts FROM contact_plans WHERE lead_id = $1', [leadId]);
  return rows[0]?.attempts ?? null;
}

test('a voice attempt and a WhatsApp turn write contact.attempted in one shape', async () => {
  const voiceLead = await newLead();
  const waLead = await newLead();
  const n = await recordAttempt(app.db.pool, voiceLead, {
    channel: 'voice',
    kind: 'call',
    outcome: 'no_answer',
    data: { providerCallId: 'call-1', kind: 'overridden' },
  });
  assert.equal(n, 1);
  assert.equal(await recordAttempt(app.db.pool, voiceLead, { channel: 'voice', kind: 'call', outcome: 'busy' }), 2);
  await finishTurn(
    waLead,
    { attempt: { kind: 'template', data: { providerCallId: 'call-1', kind: 'overridden' } } },
    {
      state: 'sent',
    },
  );
  await finishTurn(waLead, { attempt: { kind: 'template' } }, { state: 'sent' });

  const voice = (await timeline(app, voiceLead, ['contact.attempted'])).map((e) => e.data);
  const wa = (await timeline(app, waLead, ['contact.attempted'])).map((e) => e.data);
  // The caller's data first, the four keys over it; only the channel's own values differ.
  assert.deepEqual(voice, [
    { providerCallId: 'call-1', channel: 'voice', attempt: 1, kind: 'call', outcome: 'no_answer' },
    { channel: 'voice', attempt: 2, kind: 'call', outcome: 'busy' },
  ]);
  assert.deepEqual(wa, [
    { providerCallId: 'call-1', channel: 'whatsapp', attempt: 1, kind: 'template', outcome: 'sent' },
    { channel: 'whatsapp', attempt: 2, kind: 'template', outcome: 'sent' },
  ]);
  const { rows } = await app.db.pool.query(
    'SELECT lead_id, channel FROM contact_plans WHERE lead_id = ANY($1::uuid[]) ORDER BY channel',
    [[voiceLead, waLead]],
  );
  assert.deepEqual(
    rows.map((r) => [r.lead_id, r.channel]),
    [
      [voiceLead, 'voice'],
      [waLead, 'whatsapp'],
    ],
    'the first attempt creates the plan on its channel',
  );
});

test('a skipped turn counts with its code; a send after the plan moved on counts only on a plan', async () => {
  const lead = await newLead();
  await finishTurn(
    lead,
    { attempt: { kind: 'nudge', data: { why: 'x' } } },
    { state: 'failed', outcome: 'skipped:131049' },
  );
  const step = (await scheduleStep(app.db.pool, lead, { kind: 'template', at: clock.read(), reason: 'r' }))!;
  // The plan moved on (a later step stands): this send still counts, and nothing else changes.
  await finishTurn(lead, { attempt: { kind: 'template' } }, { state: 'sent', planStep: step - 1 });
  assert.deepEqual(
    (await timeline(app, lead, ['contact.attempted'])).map((e) => e.data),
    [
      { why: 'x', channel: 'whatsapp', attempt: 1, kind: 'nudge', outcome: 'skipped', code: '131049' },
      { channel: 'whatsapp', attempt: 2, kind: 'template', outcome: 'sent' },
    ],
  );
  const { rows } = await app.db.pool.query('SELECT step, next_kind FROM contact_plans WHERE lead_id = $1', [lead]);
  assert.deepEqual(rows[0], { step, next_kind: 'template' }, 'the standing step is left as it is');

  // A lead without a plan: a stale plan turn's send creates none and counts nothing.
  const planless = await newLead();
  await finishTurn(planless, { attempt: { kind: 'template' } }, { state: 'sent', planStep: 3 });
  assert.equal(await attempts(planless), null);
  assert.deepEqual(await timeline(app, planless, ['contact.attempted']), []);
});

test('a lead is reached once, by a call or a message, on the attempt it was reached on', async () => {
  const called = await newLead();
  await recordAttempt(app.db.pool, called, { channel: 'voice', kind: 'first_contact', outcome: 'no_answer' });
  await recordAttempt(app.db.pool, called, { channel: 'voice', kind: 'call', outcome: 'answered' });
  await recordReached(app.db.pool, called, 'voice', 2);
  await recordReached(app.db.pool, called, 'voice', 3);
  await inbound(called, 'a');
  assert.deepEqual(
    (await timeline(app, called, ['contact.reached'])).map((e) => e.data),
    [{ channel: 'voice', attempt: 2 }],
  );

  // A message: the plan's attempts so far, at least 1 (a plan scheduled before any attempt).
  const wrote = await newLead();
  await scheduleStep(app.db.pool, wrote, { kind: 'template', at: clock.read(), reason: 'r' });
  await inbound(wrote, 'b');
  await inbound(wrote, 'c');
  await recordReached(app.db.pool, wrote, 'voice', 5);
  assert.deepEqual(
    (await timeline(app, wrote, ['contact.reached'])).map((e) => e.data),
    [{ channel: 'whatsapp', attempt: 1 }],
  );
  const counted = await newLead();
  await finishTurn(counted, { attempt: { kind: 'first_contact' } }, { state: 'sent' });
  await finishTurn(counted, { attempt: { kind: 'template' } }, { state: 'sent' });
  await inbound(counted, 'd');
  assert.deepEqual(
    (await timeline(app, counted, ['contact.reached'])).map((e) => e.data),
    [{ channel: 'whatsapp', attempt: 2 }],
  );
  const { rows } = await app.db.pool.query(
    'SELECT reached_at IS NOT NULL AS reached, reached_attempt FROM lead_funnel WHERE lead_id = $1',
    [counted],
  );
  assert.deepEqual(rows[0], { reached: true, reached_attempt: 2 }, 'analytics read the entry');

  // No plan, no reach (a lead the agent never contacted writing first).
  const planless = await newLead();
  await inbound(planless, 'e');
  assert.deepEqual(await timeline(app, planless, ['contact.reached']), []);
});

async function inbound(leadId: string, id: string): Promise<void> {
  await insertInbound(app.db.pool, {
    leadId,
    provider: 'twilio',
    providerMessageId: `SM-reach-${leadId}-${id}`,
    text: 'hello',
    receivedAt: clock.read(),
  });
}
