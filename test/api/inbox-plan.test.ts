import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { listInbox } from '../../src/admin/leads/inbox-queries.ts';
import type { Queryable } from '../../src/db/pool.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// The inbox's newest-first pages are read off one index in their keyset order, with the Sandbox
// switch off (live leads only) and on (both modes): migration 028 (docs/DASHBOARD.md, "The inbox").
// Seq scans and bitmap scans are off for the EXPLAIN, as on a workspace too large for them.

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

/** The SQL and values listInbox sends, without running it. */
async function inboxStatement(workspaceId: string, sandbox: boolean): Promise<{ text: string; values: unknown[] }> {
  let sent: { text: string; values: unknown[] } | undefined;
  const recorder = {
    query: async (text: string, values: unknown[]) => {
      sent = { text, values };
      return { rows: [] };
    },
  } as unknown as Queryable;
  await listInbox(recorder, { workspaceId, sandbox, limit: 50 });
  return sent!;
}

for (const sandbox of [false, true]) {
  const mode = sandbox ? 'on' : 'off';
  test(`newest first with the Sandbox switch ${mode}: an index scan of leads_inbox, no sort`, async () => {
    const ws = await app.createWorkspace('whatsapp');
    const { text, values } = await inboxStatement(ws.workspaceId, sandbox);
    const client = await app.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL enable_seqscan = off');
      await client.query('SET LOCAL enable_bitmapscan = off');
      const plan = JSON.stringify((await client.query(`EXPLAIN (FORMAT JSON) ${text}`, values)).rows[0]['QUERY PLAN']);
      assert.match(plan, /"Index Name":"leads_inbox"/);
      assert.doesNotMatch(plan, /"Node Type":"(Sort|Incremental Sort)"/);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
}
