import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { listDeadTurns } from '../../src/jobs/dead-letters.ts';
import type { Role } from '../../src/operators/roles.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// The Logs page's admin API (docs/DASHBOARD.md, "Logs, dead letters and the audit log"): the
// integration log (filters, pages, masked secrets, announced per statement), the dead letters
// scoped to the workspace with Retry (a dead-lettered turn is sent once retried), and the audit
// log; each route per role, another workspace's turn, CSRF.

let h: WhatsappHarness;
let ws: { slug: string; apiKey: string; workspaceId: string };
let other: { slug: string; apiKey: string; workspaceId: string };
const sessions = {} as Record<Role, AdminSession>;
const ops = {} as Record<Role, { email: string; name: string }>;
let otherOwner: AdminSession;
let outsider: AdminSession;
const base = () => `/api/admin/workspaces/${ws.slug}`;

before(async () => {
  h = await startWhatsappHarness();
  ws = await h.workspace('twilio');
  other = await h.workspace('twilio');
  for (const role of ['owner', 'admin', 'agent', 'viewer'] as const) {
    const op = await makeOperator(h.app, [{ workspaceId: ws.workspaceId, role }], `The ${role}`);
    ops[role] = op;
    sessions[role] = (await signIn(h.app.http, op.email, op.password)).session!;
  }
  const o = await makeOperator(h.app, [{ workspaceId: other.workspaceId, role: 'owner' }]);
  otherOwner = (await signIn(h.app.http, o.email, o.password)).session!;
  const x = await makeOperator(h.app, []);
  outsider = (await signIn(h.app.http, x.email, x.password)).session!;
});
after(async () => {
  await h?.close();
});

/** A lead of `w` whose first contact fails until it is dead-lettered (six refused sends). */
async function deadLetteredLead(w: { apiKey: string }): Promise<{ leadId: string; phone: string; turnId: string }> {
  h.twilio.failNextSends(6, { status: 401, code: 20003 });
  const { leadId, phone } = await h.submit(w.apiKey, { phone: uniquePhone() });
  const [outbox] = (await h.app.db.pool.query(`SELECT job_id FROM outbox WHERE payload->>'leadId' = $1`, [leadId]))
    .rows;
  await h.settle({ ignoreBackoff: true });
  return { leadId, phone, turnId: outbox.job_id };
}

describe('the integration log', () => {
  let dead: { leadId: string; phone: string; turnId: string };
  let sent: { leadId: string; phone: string };
  before(async () => {
    dead = await deadLetteredLead(ws);
    sent = await h.submit(ws.apiKey, { phone: uniquePhone() });
    await h.settle({ ignoreBackoff: true });
  });

  it(
    'lists provider traffic newest first with operation, status, ' + 'latency and the error text; secrets stay masked',
    async () => {
      const r = await admin(h.app.http, sessions.agent, 'GET', `${base()}/integration-log`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const entries = r.body.entries as Array<Record<string, any>>;
      assert.ok(entries.length >= 7);
      const ids = entries.map((e) => BigInt(e.id));
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => (a > b ? -1 : 1)),
      );
      const ok = entries.find((e) => e.leadId === sent.leadId && e.provider === 'twilio' && e.direction === 'out')!;
      assert.equal(ok.operation, 'POST /Messages.json');
      assert.equal(ok.direction, 'out');
      assert.equal(ok.failed, false);
      assert.equal(typeof ok.latencyMs, 'number');
      assert.equal(ok.leadExists, true);
      const failed = entries.filter((e) => e.leadId === dead.leadId && e.provider === 'twilio');
      assert.equal(failed.length, 6);
      for (const f of failed) {
        assert.equal(f.httpStatus, 401);
        assert.equal(f.failed, true);
        assert.match(f.error, /20003/);
      }
      // The Twilio auth token is the workspace's secret: never in what the page gets.
      assert.ok(!JSON.stringify(r.body).includes(h.twilio.authToken));
    },
  );

  it('filters by errors only, provider and lead, and pages by cursor', async () => {
    const errors = await admin(h.app.http, sessions.admin, 'GET', `${base()}/integration-log?errors=true`);
    assert.equal(errors.status, 200);
    assert.ok(errors.body.entries.length >= 6);
    assert.ok(errors.body.entries.every((e: any) => e.failed));
    const llm = await admin(h.app.http, sessions.admin, 'GET', `${base()}/integration-log?provider=llm`);
    assert.ok(llm.body.entries.every((e: any) => e.provider === 'llm'));
    const lead = await admin(h.app.http, sessions.admin, 'GET', `${base()}/integration-log?leadId=${sent.leadId}`);
    assert.ok(lead.body.entries.length >= 1 && lead.body.entries.every((e: any) => e.leadId === sent.leadId));
    const all = (
      await admin(h.app.http, sessions.admin, 'GET', `${base()}/integration-log?limit=200`)
    ).body.entries.map((e: any) => e.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await admin(
        h.app.http,
        sessions.admin,
        'GET',
        `${base()}/integration-log?limit=3${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...page.body.entries.map((e: any) => e.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    assert.deepEqual(seen, all);
  });

  it('answers 400 to a bad filter, 403 to a viewer, 404 outside the workspace', async () => {
    const bad = await admin(h.app.http, sessions.owner, 'GET', `${base()}/integration-log?leadId=nope&cursor=x`);
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.issues.map((i: any) => i.path[0]).sort(), ['cursor', 'leadId']);
    const viewer = await admin(h.app.http, sessions.viewer, 'GET', `${base()}/integration-log`);
    assert.equal(viewer.status, 403);
    assert.equal(viewer.body.error, 'Your role in this workspace does not allow this.');
    for (const s of [otherOwner, outsider])
      assert.equal((await admin(h.app.http, s, 'GET', `${base()}/integration-log`)).status, 404);
    assert.equal((await admin(h.app.http, null, 'GET', `${base()}/integration-log`)).status, 401);
    // Another workspace sees none of these entries.
    const theirs = await admin(
      h.app.http,
      otherOwner,
      'GET',
      `/api/admin/workspaces/${other.slug}/integration-log?leadId=${sent.leadId}`,
    );
    assert.deepEqual(theirs.body.entries, []);
  });

  it('announces new entries once per statement, not per row', async () => {
    const listener = new pg.Client({ connectionString: h.app.db.url });
    await listener.connect();
    const heard: Array<{ w: string; k: string; l: string[] | null }> = [];
    let marker!: () => void;
    const markerHeard = new Promise<void>((resolve) => (marker = resolve));
    listener.on('notification', (n) => {
      const p = JSON.parse(n.payload!);
      if (p.k === 'marker') marker();
      else heard.push(p);
    });
    await listener.query('LISTEN leadintake_live');
    // The triggers notify only while some process holds a live page's lease (migration 019).
    await h.app.db.pool.query(`INSERT INTO live_listeners VALUES ('admin-logs test', now() + interval '1 hour')`);
    try {
      await h.app.db.pool.query(
        `INSERT INTO integration_events (workspace_id, lead_id, provider, direction, kind, payload)
         SELECT $1, $2, 'vapi', 'out', 'POST /call', '{}' FROM generate_series(1, 50)`,
        [ws.workspaceId, sent.leadId],
      );
      // Notifications arrive in commit order: once the marker is heard, the insert's has been too.
      await h.app.db.pool.query(`SELECT pg_notify('leadintake_live', '{"k":"marker"}')`);
      await markerHeard;
      const mine = heard.filter((n) => n.k === 'integration');
      assert.deepEqual(mine, [{ w: ws.workspaceId, k: 'integration', l: [sent.leadId] }]);
    } finally {
      await h.app.db.pool.query(`DELETE FROM live_listeners WHERE listener = 'admin-logs test'`);
      await listener.end();
    }
  });
});

describe('dead letters', () => {
  let mine: { leadId: string; phone: string; turnId: string };
  let theirs: { leadId: string; phone: string; turnId: string };
  before(async () => {
    // The first describe's dead letter is there too; start from this workspace's being empty.
    await admin(h.app.http, sessions.owner, 'POST', `${base()}/dead-letters/retry`);
    await h.settle({ ignoreBackoff: true });
    mine = await deadLetteredLead(ws);
    theirs = await deadLetteredLead(other);
  });

  it("lists the workspace's dead-lettered turns with lead, attempts and reason, and no other workspace's", async () => {
    const r = await admin(h.app.http, sessions.agent, 'GET', `${base()}/dead-letters`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.deadLetters.length, 1);
    const [d] = r.body.deadLetters;
    assert.equal(d.id, mine.turnId);
    assert.equal(d.leadId, mine.leadId);
    assert.equal(d.attempts, 6);
    assert.match(d.reason, /refused the workspace's settings/);
    const t = await admin(h.app.http, otherOwner, 'GET', `/api/admin/workspaces/${other.slug}/dead-letters`);
    assert.deepEqual(
      t.body.deadLetters.map((x: any) => x.id),
      [theirs.turnId],
    );
  });

  it('refuses: viewer 403 to see, agent 403 to retry, no CSRF 403, another workspace 404, unknown id 404', async () => {
    assert.equal((await admin(h.app.http, sessions.viewer, 'GET', `${base()}/dead-letters`)).status, 403);
    for (const url of [`${base()}/dead-letters/${mine.turnId}/retry`, `${base()}/dead-letters/retry`]) {
      assert.equal((await admin(h.app.http, sessions.agent, 'POST', url)).status, 403);
      assert.equal((await admin(h.app.http, sessions.viewer, 'POST', url)).status, 403);
      const noCsrf = await admin(h.app.http, sessions.owner, 'POST', url, {}, { csrf: false });
      assert.equal(noCsrf.status, 403);
      assert.equal(noCsrf.body.error, 'Missing or invalid CSRF token.');
      assert.equal((await admin(h.app.http, otherOwner, 'POST', url)).status, 404);
    }
    // Another workspace's turn, retried through this workspace's URL: as unknown as a made-up id.
    const cross = await admin(h.app.http, sessions.owner, 'POST', `${base()}/dead-letters/${theirs.turnId}/retry`);
    assert.equal(cross.status, 404);
    assert.equal(cross.body.error, 'No such dead-lettered turn in this workspace (it may have been retried already).');
    assert.equal(
      (await admin(h.app.http, sessions.owner, 'POST', `${base()}/dead-letters/not-a-uuid/retry`)).status,
      404,
    );
    assert.ok(
      (await listDeadTurns(h.app.boss)).some((d) => d.id === theirs.turnId),
      "the other workspace's turn is still dead-lettered",
    );
  });

  it('Retry sends the turn back; it is sent; the audit log names who retried it', async () => {
    const r = await admin(h.app.http, sessions.admin, 'POST', `${base()}/dead-letters/${mine.turnId}/retry`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.retried, 1);
    await h.settle({ ignoreBackoff: true });
    assert.equal(h.twilio.messages.filter((m) => m.to === mine.phone).length, 1);
    assert.deepEqual((await admin(h.app.http, sessions.admin, 'GET', `${base()}/dead-letters`)).body.deadLetters, []);
    const again = await admin(h.app.http, sessions.admin, 'POST', `${base()}/dead-letters/${mine.turnId}/retry`);
    assert.equal(again.status, 404);
    const audit = await admin(h.app.http, sessions.owner, 'GET', `${base()}/audit-log`);
    const row = audit.body.events.find((e: any) => e.type === 'dead_letter.retried' && e.subjectId === mine.turnId);
    assert.ok(row, JSON.stringify(audit.body));
    assert.deepEqual(row.operator, { name: ops.admin.name, email: ops.admin.email });
  });

  it("Retry all retries only the workspace's own turns", async () => {
    const again = await deadLetteredLead(ws);
    const r = await admin(h.app.http, sessions.owner, 'POST', `${base()}/dead-letters/retry`);
    assert.equal(r.status, 200);
    assert.equal(r.body.retried, 1);
    await h.settle({ ignoreBackoff: true });
    assert.equal(h.twilio.messages.filter((m) => m.to === again.phone).length, 1);
    assert.ok(
      (await listDeadTurns(h.app.boss)).some((d) => d.id === theirs.turnId),
      "the other workspace's turn is still dead-lettered",
    );
    const none = await admin(h.app.http, sessions.owner, 'POST', `${base()}/dead-letters/retry`);
    assert.deepEqual(none.body, { ok: true, retried: 0 });
  });
});

describe('the audit log', () => {
  it('shows who, what, when and the subject, newest first, in pages; CLI actors as such', async () => {
    const { leadId } = await h.submit(ws.apiKey, { phone: uniquePhone() });
    await h.app.db.pool.query(
      `INSERT INTO audit_events (workspace_id, type, subject_id, actor) VALUES ($1, 'lead.erased',
        gen_random_uuid(), 'cli:alice'), ($1, 'lead.note', $2, 'cli:bob'), ($3, 'lead.erased', NULL, 'cli:eve')`,
      [ws.workspaceId, leadId, other.workspaceId],
    );
    const r = await admin(h.app.http, sessions.admin, 'GET', `${base()}/audit-log?limit=2`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const [newest, erased] = r.body.events;
    assert.deepEqual(
      [newest.actor, newest.operator, newest.subjectId, newest.subjectIsLead],
      ['cli:bob', null, leadId, true],
    );
    assert.deepEqual([erased.actor, erased.type, erased.subjectIsLead], ['cli:alice', 'lead.erased', false]);
    assert.ok(r.body.nextCursor);
    const rest = await admin(
      h.app.http,
      sessions.admin,
      'GET',
      `${base()}/audit-log?cursor=${r.body.nextCursor}&limit=200`,
    );
    assert.ok(rest.body.events.every((e: any) => BigInt(e.id) < BigInt(erased.id)));
    assert.ok(rest.body.events.some((e: any) => e.type === 'dead_letter.retried'));
    assert.ok(
      ![...r.body.events, ...rest.body.events].some((e: any) => e.actor === 'cli:eve'),
      "another workspace's row",
    );
  });

  it('is for owners and admins: agents and viewers 403, non-members 404', async () => {
    assert.equal((await admin(h.app.http, sessions.owner, 'GET', `${base()}/audit-log`)).status, 200);
    for (const role of ['agent', 'viewer'] as const)
      assert.equal((await admin(h.app.http, sessions[role], 'GET', `${base()}/audit-log`)).status, 403);
    assert.equal((await admin(h.app.http, otherOwner, 'GET', `${base()}/audit-log`)).status, 404);
    assert.equal((await admin(h.app.http, sessions.owner, 'GET', `${base()}/audit-log?cursor=-1`)).status, 400);
  });
});
