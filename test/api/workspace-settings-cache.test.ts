import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { WorkspaceService } from '../../src/workspaces/workspace-service.ts';
import { TEST_ENCRYPTION_KEY } from '../helpers/test-app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';

// WorkspaceService.settingsOf keeps opened settings per process, keyed by the sealed blob: a
// change made by another process (another service on the same database) is seen at once.

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(() => db.drop());

const TWILIO = {
  provider: 'twilio' as const,
  accountSid: `AC${'a1'.repeat(16)}`,
  authToken: 'token-0123456789',
  from: '+14155550100',
  templateContentSid: `HX${'b2'.repeat(16)}`,
};

it('opened settings are shared and frozen, and a change by another process is seen at once', async () => {
  const box = () => new SecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY));
  const reader = new WorkspaceService(db.pool, box(), 100);
  const writer = new WorkspaceService(db.pool, box(), 100);
  await writer.create({ slug: 'cached', name: 'Cached', channel: 'whatsapp', config: { whatsapp: TWILIO } });

  const row = (await reader.findBySlug('cached'))!;
  const first = reader.settingsOf(row);
  assert.equal(first.whatsapp?.provider === 'twilio' && first.whatsapp.authToken, 'token-0123456789');
  assert.equal(reader.settingsOf(row), first, 'the same row is opened once');
  assert.ok(Object.isFrozen(first.whatsapp), 'callers share it, so nobody may change it');

  await writer.update('cached', { whatsapp: { ...TWILIO, authToken: 'token-rotated-42' } });
  const changed = reader.settingsOf((await reader.findBySlug('cached'))!);
  assert.equal(changed.whatsapp?.provider === 'twilio' && changed.whatsapp.authToken, 'token-rotated-42');
});
