import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { pendingStep, timeline } from '../helpers/contact-plan-harness.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// The lead page's Follow-ups (docs/DASHBOARD.md, "Follow-ups"): the plan on the lead page and the
// inbox's next attempt; Call now, Skip and Stop follow-ups with their guards (status, kill switch,
// do-not-contact list, nothing pending), roles, tenant scope and audit rows; the Agent page edits
// `agent.contactPlan` with the config file's schema.

let app: TestApp;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let other: Awaited<ReturnType<TestApp['createWorkspace']>>;
let agent: AdminSession;
let viewer: AdminSession;
let owner: AdminSession;
let outsider: AdminSession;
// The database's now() and the clock agree (plan steps are compared with both).
const clock = new TestClock(Date.now());
const HOUR = 3_600_000;

before(async () => {
  app = await startTestApp({ clock });
  ws = await app.createWorkspace('whatsapp');
  other = await app.createWorkspace('whatsapp');
  const session = async (workspaceId: string, role: 'owner' | 'agent' | 'viewer', name: string) => {
    const op = await makeOperator(app, [{ workspaceId, role }], name);
    return (await signIn(app.http, op.email, op.password)).session!;
  };
  agent = await session(ws.workspaceId, 'agent', 'Sam Agent');
  viewer = await session(ws.workspaceId, 'viewer', 'Vic Viewer');
  owner = await session(ws.workspaceId, 'owner', 'Olive Owner');
  outsider = await session(other.workspaceId, 'agent', 'Olga Outsider');
});
after(() => app.close());

const leadUrl = (id: string, slug = ws.slug) => `/api/admin/workspaces/${slug}/leads/${id}`;
const planUrl = (id: string, action: string, slug = ws.slug) => `${leadUrl(id, slug)}/contact-plan/${action}`;
const sql = async (text: string, values: unknown[] = []) => (await app.db.pool.query(text, values)).rows;

async function newLead(key = ws.apiKey): Promise<string> {
  const r = await postLead(app.http, key, validLead());
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.leadId;
}

/** A lead with a follow-up template pending in an hour (as the WhatsApp ladder would schedule it). */
async function leadWithPendingStep(kind = 'template'): Promise<{ id: string; at: Date }> {
  const id = await newLead();
  const at = new Date(clock.now + HOUR);
  await sql(`SELECT contact_plan_schedule($1, $2, $3, 'first follow-up', '{"followUp": 1}'::jsonb)`, [id, kind, at]);
  return { id, at };
}

const audits = async (type: string, leadId: string) =>
  (await sql('SELECT count(*)::int AS n FROM audit_events WHERE type = $1 AND subject_id = $2', [type, leadId]))[0]
    .n as number;

describe('the plan on the lead page and in the inbox', () => {
  it('a lead without a plan shows none; a pending step shows when, which kind and why', async () => {
    const bare = await newLead();
    const page = await admin(app.http, agent, 'GET', leadUrl(bare));
    assert.equal(page.status, 200);
    assert.equal(page.body.contactPlan, null);

    const { id, at } = await leadWithPendingStep();
    const planned = (await admin(app.http, agent, 'GET', leadUrl(id))).body.contactPlan;
    assert.ok(planned.leadTimeZones.length > 0, "the zones of the lead's number");
    assert.deepEqual(planned, {
      attempts: 0,
      leadTimeZones: planned.leadTimeZones,
      next: { kind: 'template', at: at.toISOString(), reason: 'first follow-up' },
      inFlight: false,
      endedAt: null,
      endedReason: null,
      reachedAt: null,
    });
    const inbox = await admin(app.http, agent, 'GET', `/api/admin/workspaces/${ws.slug}/leads?sandbox=true`);
    assert.equal(inbox.status, 200);
    const rows = new Map(inbox.body.leads.map((l: { id: string }) => [l.id, l]));
    assert.deepEqual((rows.get(id) as { nextAttempt: unknown }).nextAttempt, {
      kind: 'template',
      at: at.toISOString(),
    });
    assert.equal((rows.get(bare) as { nextAttempt: unknown }).nextAttempt, null);
    // A lead who told us their zone: the page shows the next attempt in it.
    const tokyo = (await postLead(app.http, ws.apiKey, validLead({ metadata: { timeZone: 'Asia/Tokyo' } }))).body
      .leadId as string;
    await sql(`SELECT contact_plan_schedule($1, 'template', $2, 'first follow-up', '{}'::jsonb)`, [tokyo, at]);
    const page2 = (await admin(app.http, agent, 'GET', leadUrl(tokyo))).body.contactPlan;
    assert.deepEqual(page2.leadTimeZones, ['Asia/Tokyo']);
  });
});

describe('Call now', () => {
  it('moves the pending step to now, marked as the operator’s, and the timeline says who', async () => {
    const { id } = await leadWithPendingStep();
    const r = await admin(app.http, agent, 'POST', planUrl(id, 'call-now'));
    assert.deepEqual([r.status, r.body], [200, { ok: true, status: 'new' }]);
    const step = await pendingStep(app, id);
    assert.equal(step?.kind, 'template');
    assert.ok(step!.at.getTime() <= clock.now, 'due now');
    const [data] = await sql('SELECT next_data FROM contact_plans WHERE lead_id = $1', [id]);
    assert.equal(data.next_data.byOperator, true, 'bypasses the calling window');
    assert.equal(data.next_data.followUp, 1, 'the pending step’s own data is kept');
    const scheduled = await timeline(app, id, ['contact.scheduled']);
    assert.equal(scheduled.at(-1)?.data.operator, 'Sam Agent');
    assert.equal(await audits('lead.contact_plan_call_now', id), 1);
  });

  it('without a pending step: the channel’s first kind (a template on WhatsApp)', async () => {
    const id = await newLead();
    const r = await admin(app.http, agent, 'POST', planUrl(id, 'call-now'));
    assert.equal(r.status, 200);
    assert.equal((await pendingStep(app, id))?.kind, 'template');
  });

  it('is refused for a lead with a person, on the do-not-contact list, or with the agent switched off', async () => {
    const handed = await newLead();
    await sql(`UPDATE leads SET status = 'needs_human' WHERE id = $1`, [handed]);
    const r1 = await admin(app.http, agent, 'POST', planUrl(handed, 'call-now'));
    assert.deepEqual([r1.status, r1.body.status], [409, 'needs_human']);
    assert.equal(await pendingStep(app, handed), null);

    const blocked = await newLead();
    await sql(
      `INSERT INTO suppressed_numbers (workspace_id, phone_e164, source)
       SELECT workspace_id, phone_normalized, 'operator' FROM leads WHERE id = $1`,
      [blocked],
    );
    const r2 = await admin(app.http, agent, 'POST', planUrl(blocked, 'call-now'));
    assert.equal(r2.status, 409);
    assert.match(JSON.stringify(r2.body), /do-not-contact/);
    assert.equal(await pendingStep(app, blocked), null);

    const off = await newLead();
    await sql('UPDATE workspaces SET agent_enabled = false WHERE id = $1', [ws.workspaceId]);
    try {
      const r3 = await admin(app.http, agent, 'POST', planUrl(off, 'call-now'));
      assert.equal(r3.status, 409);
      assert.match(JSON.stringify(r3.body), /switched off/);
      assert.equal(await pendingStep(app, off), null);
    } finally {
      await sql('UPDATE workspaces SET agent_enabled = true WHERE id = $1', [ws.workspaceId]);
    }
  });
});

describe('Skip', () => {
  it('drops the pending attempt and moves to the step after it; contact.skipped says who', async () => {
    const { id, at } = await leadWithPendingStep();
    const r = await admin(app.http, agent, 'POST', planUrl(id, 'skip'));
    assert.deepEqual([r.status, r.body], [200, { ok: true, status: 'new' }]);
    // The first follow-up (24 h) skipped: the second (72 h after the first template) comes next.
    const step = await pendingStep(app, id);
    assert.deepEqual(
      [step?.kind, step?.at.toISOString()],
      ['template', new Date(at.getTime() + 48 * HOUR).toISOString()],
    );
    const [skipped] = await timeline(app, id, ['contact.skipped']);
    assert.deepEqual([skipped?.data.by, skipped?.data.kind], ['Sam Agent', 'template']);
    assert.equal(await audits('lead.contact_plan_skipped', id), 1);
    // The last follow-up skipped: only the end of the plan is left, a day later; it cannot be skipped.
    assert.equal((await admin(app.http, agent, 'POST', planUrl(id, 'skip'))).status, 200);
    const end = await pendingStep(app, id);
    assert.deepEqual([end?.kind, end?.at.toISOString()], ['give_up', new Date(at.getTime() + 72 * HOUR).toISOString()]);
    const again = await admin(app.http, agent, 'POST', planUrl(id, 'skip'));
    assert.equal(again.status, 409);
  });

  it('is refused when nothing is pending', async () => {
    const r = await admin(app.http, agent, 'POST', planUrl(await newLead(), 'skip'));
    assert.equal(r.status, 409);
  });
});

describe('Stop follow-ups', () => {
  it('ends the plan (operator_stopped), cancels the pending attempt, leaves the lead as it is', async () => {
    const { id } = await leadWithPendingStep();
    const r = await admin(app.http, agent, 'POST', planUrl(id, 'stop'));
    assert.deepEqual([r.status, r.body], [200, { ok: true, status: 'new' }]);
    assert.equal(await pendingStep(app, id), null);
    const plan = (await admin(app.http, agent, 'GET', leadUrl(id))).body.contactPlan;
    assert.equal(plan.endedReason, 'operator_stopped');
    assert.equal(plan.next, null);
    const [ended] = await timeline(app, id, ['contact.plan_ended']);
    assert.equal(ended?.data.operator, 'Sam Agent');
    assert.equal((ended?.data.cancelled as { kind: string } | undefined)?.kind, 'template');
    assert.equal(await audits('lead.contact_plan_stopped', id), 1);
    const inbox = await admin(app.http, agent, 'GET', `/api/admin/workspaces/${ws.slug}/leads?sandbox=true`);
    const row = inbox.body.leads.find((l: { id: string }) => l.id === id);
    assert.equal(row.nextAttempt, null, 'an ended plan has no next attempt');
    const again = await admin(app.http, agent, 'POST', planUrl(id, 'stop'));
    assert.equal(again.status, 409);
  });
});

describe('who may', () => {
  it('viewers may not; no CSRF token is 403; another workspace’s lead is not found', async () => {
    const { id } = await leadWithPendingStep();
    for (const action of ['call-now', 'skip', 'stop']) {
      const v = await admin(app.http, viewer, 'POST', planUrl(id, action));
      assert.equal(v.status, 403, action);
      const noCsrf = await admin(app.http, agent, 'POST', planUrl(id, action), {}, { csrf: false });
      assert.equal(noCsrf.status, 403, action);
      // The outsider's own workspace, our lead's id: not found, and our workspace: not theirs.
      const foreign = await admin(app.http, outsider, 'POST', planUrl(id, action, other.slug));
      assert.equal(foreign.status, 404, action);
      const notMember = await admin(app.http, outsider, 'POST', planUrl(id, action));
      assert.ok([403, 404].includes(notMember.status), action);
    }
    // Untouched by all of the above.
    assert.equal((await pendingStep(app, id))?.kind, 'template');
    const otherLead = await newLead(other.apiKey);
    const r = await admin(app.http, agent, 'POST', planUrl(otherLead, 'call-now'));
    assert.equal(r.status, 404);
    assert.equal(await pendingStep(app, otherLead), null);
  });
});

describe('the Agent page edits agent.contactPlan', () => {
  const agentUrl = () => `/api/admin/workspaces/${ws.slug}/agent`;
  const draftOf = (body: { agent: Record<string, unknown> }) => {
    const { persona, criteria, timeZone, defaultCountry } = body.agent;
    return { persona, criteria, timeZone, defaultCountry };
  };

  it('shows the defaults, saves a change, keeps it when a save leaves it out, names a bad field', async () => {
    const got = await admin(app.http, owner, 'GET', agentUrl());
    assert.equal(got.status, 200);
    const plan = got.body.agent.contactPlan;
    assert.equal(plan.voice.maxAttempts, 4);
    const changed = { ...plan, voice: { ...plan.voice, maxAttempts: 6 }, window: { ...plan.window, start: '08:30' } };
    const saved = await admin(app.http, owner, 'PUT', agentUrl(), {
      ...draftOf(got.body),
      version: got.body.version,
      contactPlan: changed,
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.deepEqual(
      [saved.body.agent.contactPlan.voice.maxAttempts, saved.body.agent.contactPlan.window.start],
      [6, '08:30'],
    );

    const kept = await admin(app.http, owner, 'PUT', agentUrl(), {
      ...draftOf(saved.body),
      version: saved.body.version,
    });
    assert.equal(kept.status, 200, JSON.stringify(kept.body));
    assert.equal(kept.body.agent.contactPlan.voice.maxAttempts, 6, 'a save without the section keeps it');

    const bad = await admin(app.http, owner, 'PUT', agentUrl(), {
      ...draftOf(kept.body),
      version: kept.body.version,
      contactPlan: { ...changed, voice: { ...changed.voice, maxAttemptsPer24h: 9, maxAttempts: 6 } },
    });
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(bad.body), /maxAttemptsPer24h/);
  });
});
