import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { COUNT_CAP, countInbox } from '../../src/admin/leads/inbox-queries.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// countInbox (src/admin/leads/inbox-queries.ts): each tab's count stops at COUNT_CAP, and "all" is
// the sum of the statuses' counts, at most COUNT_CAP as well (the dashboard shows "10,000+").

let app: TestApp;
let workspaceId: string;

before(async () => {
  app = await startTestApp();
  workspaceId = (await app.createWorkspace('whatsapp')).workspaceId;
  // COUNT_CAP + 3 booked leads and 2 new ones, named so that a search finds only the new ones.
  await app.db.pool.query(
    `INSERT INTO leads (workspace_id, name, phone, phone_normalized, email, consented_at, status)
     SELECT $1, CASE WHEN i <= $2 THEN 'Capped Person' ELSE 'Rare Person' END,
            '+4930' || (1000000 + i), '+4930' || (1000000 + i), NULL, now(),
            CASE WHEN i <= $2 THEN 'booked' ELSE 'new' END
       FROM generate_series(1, $2 + 2) AS i`,
    [workspaceId, COUNT_CAP + 3],
  );
});
after(async () => {
  await app?.close();
});

test('a status past the cap counts COUNT_CAP, and so does "all"', async () => {
  const counts = await countInbox(app.db.pool, workspaceId, false);
  assert.deepEqual(counts, {
    new: 2,
    in_conversation: 0,
    booked: COUNT_CAP,
    unqualified: 0,
    needs_human: 0,
    all: COUNT_CAP,
  });
});

test('below the cap, "all" is the sum of the statuses', async () => {
  const counts = await countInbox(app.db.pool, workspaceId, false, { search: 'Rare Person' });
  assert.equal(counts.new, 2);
  assert.equal(counts.booked, 0);
  assert.equal(counts.all, 2);
});
