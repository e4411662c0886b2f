// The maintenance pass of `serve` (src/maintenance.ts): its default steps, on the real app's
// database. Each step's own rules are tested beside it (integration-log, sandbox-isolation,
// admin-analytics); this checks that one pass runs all of them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { retentionPolicy, startMaintenance } from '../../src/maintenance.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(async () => {
  await app.close();
});

const count = async (sql: string, values: unknown[]) => (await app.db.pool.query(sql, values)).rows[0].n as number;

test(
  'one pass prunes the integration log and the voice tool calls, ' +
    'deletes old sandbox leads and writes the analytics days',
  async () => {
    const ws = await app.createWorkspace('whatsapp');
    const sandboxLead = (await postLead(app.http, ws.sandboxKey, validLead())).body.leadId;
    const liveLead = (await postLead(app.http, ws.apiKey, validLead())).body.leadId;
    await app.db.pool.query(`UPDATE leads SET created_at = now() - interval '8 days' WHERE id = ANY($1::uuid[])`, [
      [sandboxLead, liveLead],
    ]);
    const days = app.config.INTEGRATION_LOG_RETENTION_DAYS + 1;
    await app.db.pool.query(
      `INSERT INTO voice_tool_calls (workspace_id, tool_call_id, provider_call_id, name, created_at)
      VALUES ($1, 'old-tool-call', 'call-1', 'bookConsult', now() - make_interval(days => $2))`,
      [ws.workspaceId, days],
    );
    await app.db.pool.query(
      `INSERT INTO integration_events (workspace_id, provider, direction, kind, outcome, payload,
      created_at) VALUES ($1, 'vapi', 'in', 'old', 'applied', '{}', now() - make_interval(days => $2))`,
      [ws.workspaceId, days],
    );
    await app.db.pool.query(
      `INSERT INTO rate_limit_counters (api_key_id, window_start, count)
      SELECT id, now() - interval '3 hours', 5 FROM api_keys WHERE workspace_id = $1`,
      [ws.workspaceId],
    );
    const maintenance = startMaintenance({
      pool: app.db.pool,
      log: app.log,
      policy: retentionPolicy(app.config),
      intervalMs: 3_600_000,
    });
    try {
      assert.ok((await maintenance.runOnce()) >= 3);
    } finally {
      await maintenance.stop();
    }
    assert.equal(
      await count(`SELECT count(*)::int AS n FROM integration_events WHERE workspace_id = $1 AND kind = 'old'`, [
        ws.workspaceId,
      ]),
      0,
    );
    assert.equal(
      await count('SELECT count(*)::int AS n FROM voice_tool_calls WHERE workspace_id = $1', [ws.workspaceId]),
      0,
    );
    assert.equal(
      await count('SELECT count(*)::int AS n FROM leads WHERE id = $1', [sandboxLead]),
      0,
      'the sandbox lead is past its retention',
    );
    assert.equal(await count('SELECT count(*)::int AS n FROM leads WHERE id = $1', [liveLead]), 1);
    assert.equal(
      await count(
        `SELECT count(*)::int AS n FROM rate_limit_counters c JOIN api_keys k ON k.id = c.api_key_id
        WHERE k.workspace_id = $1 AND c.window_start < now() - interval '2 hours'`,
        [ws.workspaceId],
      ),
      0,
      'the ended rate-limit windows are dropped',
    );
    assert.ok(
      (await count('SELECT count(*)::int AS n FROM analytics_days WHERE workspace_id = $1', [ws.workspaceId])) > 0,
      'the past days are summarised',
    );
  },
);
