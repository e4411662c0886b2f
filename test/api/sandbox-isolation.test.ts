import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pruneSandboxLeads } from '../../src/sandbox/sandbox-retention.ts';
import { getLead, postLead, uniquePhone, validLead } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// Sandbox and live data never mix (docs/SANDBOX.md): a lead is read only with a key of its own
// workspace and mode, both ways, with the spec's byte-identical 404; a phone is unique per mode.

let app: TestApp;

before(async () => {
  app = await startTestApp();
});
after(() => app.close());

describe('sandbox keys', () => {
  test('a workspace gets a li_test_ key beside its live key, and key create --sandbox makes more', async () => {
    const ws = await app.createWorkspace('whatsapp');
    assert.match(ws.sandboxKey, /^li_test_[A-Za-z0-9_-]{32}$/);
    assert.match(ws.apiKey, /^li_live_[A-Za-z0-9_-]{32}$/);
    const more = await app.workspaces.createKey(ws.slug, { sandbox: true });
    assert.match(more!.key, /^li_test_/);
    const live = await app.workspaces.createKey(ws.slug, {});
    assert.match(live!.key, /^li_live_/);
  });

  test(
    'a sandbox lead is readable only with a sandbox key of its ' + 'workspace; a live lead only with a live key',
    async () => {
      const ws = await app.createWorkspace('whatsapp');
      const other = await app.createWorkspace('whatsapp');
      const phone = uniquePhone();
      const sandbox = await postLead(app.http, ws.sandboxKey, validLead({ phone }));
      assert.equal(sandbox.status, 201, JSON.stringify(sandbox.body));
      assert.deepEqual(Object.keys(sandbox.body), ['ok', 'leadId', 'status', 'messageQueued']);
      // The same phone live is a new lead, not a duplicate of the sandbox one.
      const live = await postLead(app.http, ws.apiKey, validLead({ phone }));
      assert.equal(live.status, 201, JSON.stringify(live.body));
      assert.notEqual(live.body.leadId, sandbox.body.leadId);

      const unknown = await getLead(app.http, ws.apiKey, crypto.randomUUID());
      for (const [key, id] of [
        [ws.apiKey, sandbox.body.leadId],
        [ws.sandboxKey, live.body.leadId],
        [other.sandboxKey, sandbox.body.leadId],
        [other.apiKey, live.body.leadId],
      ] as const) {
        const res = await getLead(app.http, key, id);
        assert.equal(res.status, 404);
        assert.deepEqual(res.body, unknown.body);
      }
      const own = await getLead(app.http, ws.sandboxKey, sandbox.body.leadId);
      assert.equal(own.status, 200);
      assert.equal(own.body.lead.livemode, false);
      const ownLive = await getLead(app.http, ws.apiKey, live.body.leadId);
      assert.equal(ownLive.body.lead.livemode, true);
    },
  );

  test('duplicates are decided within a mode: the 409 names the lead of the same mode', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const phone = uniquePhone();
    const first = await postLead(app.http, ws.sandboxKey, validLead({ phone }));
    await postLead(app.http, ws.apiKey, validLead({ phone }));
    const again = await postLead(app.http, ws.sandboxKey, validLead({ phone }));
    assert.equal(again.status, 409);
    assert.equal(again.body.error, 'duplicate_phone');
    assert.equal(again.body.leadId, first.body.leadId);
  });
});

describe('retention', () => {
  test(
    'sandbox leads older than 7 days are deleted with their ' + 'timeline; live leads and younger sandbox leads stay',
    async () => {
      const ws = await app.createWorkspace('whatsapp');
      const oldSandbox = (await postLead(app.http, ws.sandboxKey, validLead())).body.leadId;
      const youngSandbox = (await postLead(app.http, ws.sandboxKey, validLead())).body.leadId;
      const oldLive = (await postLead(app.http, ws.apiKey, validLead())).body.leadId;
      await app.db.pool.query(
        `UPDATE leads SET created_at = now() - interval '7 days 1 minute' WHERE id = ANY($1::uuid[])`,
        [[oldSandbox, oldLive]],
      );
      await app.db.pool.query(`UPDATE leads SET created_at = now() - interval '6 days 23 hours' WHERE id = $1`, [
        youngSandbox,
      ]);
      assert.equal(await pruneSandboxLeads(app.db.pool), 1);
      const { rows } = await app.db.pool.query('SELECT id FROM leads WHERE id = ANY($1::uuid[]) ORDER BY id', [
        [oldSandbox, youngSandbox, oldLive],
      ]);
      assert.deepEqual(rows.map((r) => r.id).sort(), [youngSandbox, oldLive].sort());
      const events = await app.db.pool.query('SELECT count(*)::int AS n FROM lead_events WHERE lead_id = $1', [
        oldSandbox,
      ]);
      assert.equal(events.rows[0].n, 0);
    },
  );
});
