import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// Who owns each lead, how long it has waited, and whether it is unread (docs/DASHBOARD.md, "The
// operator's day"): the inbox's owner, waitingSince and unread fields, the "waiting longest" order,
// the workspace's waiting thresholds, and Take over's claim (one of two racing operators wins).

let app: TestApp;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
type Op = { session: AdminSession; id: string; name: string };
const ops = {} as Record<'ada' | 'bo' | 'admin' | 'agent' | 'viewer' | 'stranger', Op>;

const leadsUrl = () => `/api/admin/workspaces/${ws.slug}/leads`;
const settingsUrl = () => `/api/admin/workspaces/${ws.slug}/inbox-settings`;
let phoneSeq = 0;
async function newLead(): Promise<string> {
  const phone = `+4930${String(7_000_000 + ++phoneSeq).padStart(8, '0')}`;
  const r = await postLead(app.http, ws.apiKey, validLead({ phone }));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.leadId;
}
/** The agent's hand-over, as the turn engine does it (status only; the trigger records since when). */
const handOver = (id: string) => app.db.pool.query(`UPDATE leads SET status = 'needs_human' WHERE id = $1`, [id]);
const inbox = async (who: AdminSession, query = 'sandbox=true') => {
  const r = await admin(app.http, who, 'GET', `${leadsUrl()}?${query}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
};
const row = async (who: AdminSession, id: string) => (await inbox(who)).leads.find((l: { id: string }) => l.id === id);

before(async () => {
  app = await startTestApp({ clock: new TestClock() });
  ws = await app.createWorkspace('whatsapp');
  const other = await app.createWorkspace('whatsapp');
  const roles = { ada: 'agent', bo: 'agent', admin: 'admin', agent: 'agent', viewer: 'viewer' } as const;
  for (const [key, role] of Object.entries(roles)) {
    const name = key === 'ada' ? 'Ada' : key === 'bo' ? 'Bo' : `The ${key}`;
    const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role }], name);
    const r = await signIn(app.http, op.email, op.password);
    ops[key as keyof typeof ops] = { session: r.session!, id: r.body.operator.id, name };
  }
  const s = await makeOperator(app, [{ workspaceId: other.workspaceId, role: 'owner' }], 'Stranger');
  const r = await signIn(app.http, s.email, s.password);
  ops.stranger = { session: r.session!, id: r.body.operator.id, name: 'Stranger' };
});
after(() => app.close());

describe('owner and waiting time', () => {
  it("the AI's; handed over, nobody's and waiting; taken over, the operator's; resumed, the AI's", async () => {
    const id = await newLead();
    let l = await row(ops.ada.session, id);
    assert.deepEqual([l.owner, l.waitingSince], [{ kind: 'ai' }, null]);
    await handOver(id);
    l = await row(ops.ada.session, id);
    assert.deepEqual(l.owner, { kind: 'nobody' });
    assert.ok(l.waitingSince, 'a lead waiting for a person says since when');
    const taken = await admin(app.http, ops.ada.session, 'POST', `${leadsUrl()}/${id}/take-over`);
    assert.deepEqual([taken.status, taken.body], [200, { ok: true, status: 'needs_human' }]);
    l = await row(ops.bo.session, id);
    assert.deepEqual(l.owner, { kind: 'operator', id: ops.ada.id, name: 'Ada' });
    assert.equal((await admin(app.http, ops.ada.session, 'POST', `${leadsUrl()}/${id}/resume`)).status, 200);
    l = await row(ops.bo.session, id);
    assert.deepEqual([l.owner, l.waitingSince], [{ kind: 'ai' }, null]);
  });

  it('Take over of a lead with the agent records the owner in the same transaction as the status change', async () => {
    const id = await newLead();
    const taken = await admin(app.http, ops.bo.session, 'POST', `${leadsUrl()}/${id}/take-over`);
    assert.equal(taken.body.status, 'needs_human');
    const { rows } = await app.db.pool.query(
      `SELECT l.status, l.owner_operator_id, l.needs_human_since IS NOT NULL AS waiting,
              (SELECT count(*)::int FROM lead_events e
                WHERE e.lead_id = l.id AND e.type = 'operator.took_over') AS events
         FROM leads l WHERE l.id = $1`,
      [id],
    );
    assert.deepEqual(rows[0], { status: 'needs_human', owner_operator_id: ops.bo.id, waiting: true, events: 1 });
  });

  it('two operators press Take over at once: one wins, the other gets 409 naming the winner', async () => {
    for (const handedOver of [false, true]) {
      const id = await newLead();
      if (handedOver) await handOver(id);
      const press = (o: Op) => admin(app.http, o.session, 'POST', `${leadsUrl()}/${id}/take-over`);
      const [a, b] = await Promise.all([press(ops.ada), press(ops.bo)]);
      const statuses = [a!.status, b!.status].sort();
      assert.deepEqual(statuses, [200, 409], JSON.stringify([a!.body, b!.body]));
      const [winner, loser] = a!.status === 200 ? [ops.ada, b!] : [ops.bo, a!];
      assert.equal(loser.body.error, 'Someone else has taken this lead over.');
      assert.equal(loser.body.message, `Taken over by ${winner.name} a moment ago.`);
      assert.deepEqual((await row(ops.ada.session, id)).owner, { kind: 'operator', id: winner.id, name: winner.name });
      assert.equal((await admin(app.http, winner.session, 'POST', `${leadsUrl()}/${id}/take-over`)).status, 200);
    }
  });

  it('an operator of another workspace cannot take a lead over or see it', async () => {
    const id = await newLead();
    const r = await admin(app.http, ops.stranger.session, 'POST', `${leadsUrl()}/${id}/take-over`);
    assert.equal(r.status, 404);
    assert.deepEqual((await row(ops.ada.session, id)).owner, { kind: 'ai' });
  });
});

describe('unread, per operator', () => {
  it('a message from the lead marks it unread for every operator until each opens it', async () => {
    const id = await newLead();
    assert.equal((await row(ops.ada.session, id)).unread, false, 'no message from the lead: nothing to read');
    await app.db.pool.query(`UPDATE leads SET last_inbound_at = now() WHERE id = $1`, [id]);
    assert.deepEqual([(await row(ops.ada.session, id)).unread, (await row(ops.bo.session, id)).unread], [true, true]);
    assert.equal((await admin(app.http, ops.ada.session, 'GET', `${leadsUrl()}/${id}`)).status, 200);
    assert.deepEqual([(await row(ops.ada.session, id)).unread, (await row(ops.bo.session, id)).unread], [false, true]);
    await app.db.pool.query(`UPDATE leads SET last_inbound_at = last_inbound_at + interval '1 second' WHERE id = $1`, [
      id,
    ]);
    assert.equal((await row(ops.ada.session, id)).unread, true, 'a newer message is unread again');
  });

  it('opening a lead of another workspace marks nothing', async () => {
    const id = await newLead();
    await app.db.pool.query(`UPDATE leads SET last_inbound_at = now() WHERE id = $1`, [id]);
    assert.equal((await admin(app.http, ops.stranger.session, 'GET', `${leadsUrl()}/${id}`)).status, 404);
    const { rows } = await app.db.pool.query('SELECT count(*)::int AS n FROM lead_reads WHERE lead_id = $1', [id]);
    assert.equal(rows[0].n, 0);
  });
});

describe('waiting longest', () => {
  it('sort=waiting lists only leads waiting for a person, the longest waiting first, in keyset pages', async () => {
    const ids = [await newLead(), await newLead(), await newLead()];
    await newLead(); // with the agent: not listed
    for (const id of ids) await handOver(id);
    // Waiting 30, 10 and 20 minutes; earlier tests' hand-overs wait less than a minute.
    const minutes = [30, 10, 20];
    for (const [i, id] of ids.entries()) {
      await app.db.pool.query(`UPDATE leads SET needs_human_since = now() - make_interval(mins => $2) WHERE id = $1`, [
        id,
        minutes[i],
      ]);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const after = cursor ? `&cursor=${cursor}` : '';
      const page = await inbox(ops.ada.session, `sandbox=true&sort=waiting&limit=2${after}`);
      for (const l of page.leads) assert.equal(l.status, 'needs_human');
      seen.push(...page.leads.map((l: { id: string }) => l.id));
      cursor = page.nextCursor;
    } while (cursor);
    assert.deepEqual(seen.slice(0, 3), [ids[0], ids[2], ids[1]]);
    const { rows } = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM leads WHERE workspace_id = $1 AND status = 'needs_human'`,
      [ws.workspaceId],
    );
    assert.equal(seen.length, rows[0].n, 'every waiting lead once, nothing else');
  });
});

describe('waiting thresholds (inbox settings)', () => {
  it('default to 5 and 15 minutes, are in every inbox answer, and anyone in the workspace reads them', async () => {
    assert.deepEqual((await inbox(ops.viewer.session)).waiting, { amberMinutes: 5, redMinutes: 15 });
    const r = await admin(app.http, ops.viewer.session, 'GET', settingsUrl());
    assert.deepEqual([r.status, r.body], [200, { ok: true, waitingAmberMinutes: 5, waitingRedMinutes: 15 }]);
    assert.equal((await admin(app.http, ops.stranger.session, 'GET', settingsUrl())).status, 404);
  });

  it('owners and admins save them; red comes after amber; unknown fields, out-of-range values: 400', async () => {
    const save = (who: AdminSession, body: unknown) => admin(app.http, who, 'PUT', settingsUrl(), body);
    assert.equal((await save(ops.agent.session, { waitingAmberMinutes: 10, waitingRedMinutes: 30 })).status, 403);
    const order = await save(ops.admin.session, { waitingAmberMinutes: 10, waitingRedMinutes: 10 });
    assert.equal(order.status, 400);
    assert.deepEqual(
      order.body.issues.map((i: { path: string[] }) => i.path.join('.')),
      ['waitingRedMinutes'],
    );
    const bads = [
      { waitingAmberMinutes: 0, waitingRedMinutes: 5 },
      { waitingAmberMinutes: 5, waitingRedMinutes: 20_000 },
      { waitingAmberMinutes: 1.5, waitingRedMinutes: 5 },
      { waitingAmberMinutes: 5, waitingRedMinutes: 15, sound: true },
    ];
    for (const bad of bads) {
      assert.equal((await save(ops.admin.session, bad)).status, 400, JSON.stringify(bad));
    }
    const ok = await save(ops.admin.session, { waitingAmberMinutes: 10, waitingRedMinutes: 30 });
    assert.deepEqual([ok.status, ok.body], [200, { ok: true, waitingAmberMinutes: 10, waitingRedMinutes: 30 }]);
    assert.deepEqual((await inbox(ops.ada.session)).waiting, { amberMinutes: 10, redMinutes: 30 });
  });
});
