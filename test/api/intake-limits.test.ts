import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { IntakeLimits } from '../../src/auth/intake-limits.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// The browser-intake limits' counting under concurrent requests (src/auth/intake-limits.ts,
// docs/INTAKE.md): each limit admits exactly its number, and an address refused by its own limit
// does not count against the workspace's.

let app: TestApp;
let limits: IntakeLimits;
const clock = new TestClock(Date.parse('2026-11-22T10:05:00.000Z'));

before(async () => {
  app = await startTestApp({ clock });
  limits = new IntakeLimits({
    db: app.db.pool,
    clock: clock.read,
    addressKey: crypto.randomBytes(32),
    limits: { perAddress: 3, perWorkspace: 5 },
    scope: 'test',
  });
});
after(() => app.close());

const workspaceCount = async (workspaceId: string) =>
  (await app.db.pool.query('SELECT count FROM intake_rate_counters WHERE scope = $1', [`test:ws:${workspaceId}`]))
    .rows[0]?.count;

describe('intake limits under concurrency', () => {
  test('one address at once: exactly its limit admitted, and only those count for the workspace', async () => {
    const workspaceId = crypto.randomUUID();
    const decisions = await Promise.all(Array.from({ length: 30 }, () => limits.admit(workspaceId, '192.0.2.5')));
    assert.equal(decisions.filter((d) => d.ok).length, 3);
    assert.equal(await workspaceCount(workspaceId), 3);
    // The workspace has 2 left for everyone else.
    assert.equal((await limits.admit(workspaceId, '192.0.2.6')).ok, true);
    assert.equal((await limits.admit(workspaceId, '192.0.2.7')).ok, true);
    assert.equal((await limits.admit(workspaceId, '192.0.2.8')).ok, false);
  });

  test('many addresses at once: exactly the workspace limit admitted', async () => {
    const workspaceId = crypto.randomUUID();
    const decisions = await Promise.all(
      Array.from({ length: 30 }, (_, i) => limits.admit(workspaceId, `198.51.100.${i + 1}`)),
    );
    assert.equal(decisions.filter((d) => d.ok).length, 5);
    const noAddress = await Promise.all(Array.from({ length: 5 }, () => limits.admit(workspaceId, null)));
    assert.ok(noAddress.every((d) => !d.ok));
  });
});
