import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, it } from 'node:test';
import { migrate, readMigrations } from '../../src/db/migrate.ts';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { MIGRATION_DATA_STEPS } from '../../src/runtime.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { adminUrl } from '../helpers/test-db.ts';

// Migration 007 on a database that has leads from before it (phone_normalized = "+" and the
// digits): each is re-normalised to E.164; two leads that become the same number are both kept,
// reported in lead_phone_collisions and in the migration's log, and the unique index holds.

let admin: Pool;
let name: string;
let pool: Pool;

before(async () => {
  admin = createPool(adminUrl(), 1);
  name = `leadintake_mig7_${crypto.randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(adminUrl());
  u.pathname = `/${name}`;
  pool = createPool(u.toString(), 2);
});

after(async () => {
  await pool?.end();
  if (admin) {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
});

/** A lead as the service stored it before 007. */
async function oldLead(workspaceId: string, phone: string, minutesAgo: number): Promise<string> {
  const { rows } = await pool.query(
    `INSERT INTO leads (workspace_id, name, phone, phone_normalized, consented_at, created_at)
     VALUES ($1, 'Ada', $2, $3, now(), now() - make_interval(mins => $4)) RETURNING id`,
    [workspaceId, phone, `+${phone.replace(/\D/g, '')}`, minutesAgo],
  );
  return rows[0].id;
}

it('re-normalises existing leads; two that become one number are both kept and reported', async () => {
  await migrate(
    pool,
    readMigrations().filter((m) => m.version < 7),
  );
  const ws = async (slug: string) =>
    (await pool.query(`INSERT INTO workspaces (slug, name, channel) VALUES ($1, $1, 'whatsapp') RETURNING id`, [slug]))
      .rows[0].id as string;
  const [a, b] = [await ws('a'), await ws('b')];
  const older = await oldLead(a, '0049 30 2345 6789', 30); // was +00493023456789
  const newer = await oldLead(a, '+49 30 2345 6789', 20); // was +493023456789 already
  const third = await oldLead(a, '+49 (0)30 2345 6789', 10); // was +4903023456789
  const national = await oldLead(a, '030 2345 6780', 5); // was +03023456780: no country to complete it
  const us = await oldLead(a, '011 1 555 010 2000', 5);
  const otherWorkspace = await oldLead(b, '0049 30 2345 6789', 1);

  // db/migrate.ts is handed the data step (it imports no feature code); without it, 007 is
  // refused on a database that has leads, instead of leaving their numbers as they were.
  await assert.rejects(migrate(pool, readMigrations()), /007_phone_e164 failed: its data step was not passed/);
  assert.equal(
    (await pool.query('SELECT max(version)::int AS v FROM schema_migrations')).rows[0].v,
    6,
    'nothing applied',
  );

  const lines: string[] = [];
  const log = createLogger('info', {
    write: (line: string) => void lines.push(line),
  } as unknown as NodeJS.WritableStream);
  const all = readMigrations(MIGRATION_DATA_STEPS);
  assert.deepEqual(
    await migrate(pool, all, log),
    all.filter((m) => m.version >= 7).map((m) => m.name),
  );

  const { rows } = await pool.query('SELECT id, phone, phone_normalized FROM leads');
  const byId = new Map(rows.map((r) => [r.id, r]));
  assert.equal(rows.length, 6, 'no lead dropped or merged');
  // The lead that already had the E.164 value keeps it (a new submission still finds it).
  assert.equal(byId.get(newer).phone_normalized, '+493023456789');
  assert.equal(byId.get(older).phone_normalized, `+493023456789#${older}`);
  assert.equal(byId.get(third).phone_normalized, `+493023456789#${third}`);
  assert.equal(byId.get(national).phone_normalized, '+03023456780', 'not a possible number: unchanged');
  assert.equal(byId.get(us).phone_normalized, '+15550102000');
  assert.equal(byId.get(otherWorkspace).phone_normalized, '+493023456789', 'another workspace is another lead');
  assert.equal(byId.get(older).phone, '0049 30 2345 6789', 'the phone as submitted is kept');

  const reported = await pool.query(
    'SELECT lead_id, kept_lead_id, workspace_id FROM lead_phone_collisions ORDER BY found_at, lead_id',
  );
  assert.deepEqual(
    reported.rows.map((r) => [r.lead_id, r.kept_lead_id, r.workspace_id]).sort(),
    [
      [older, newer, a],
      [third, newer, a],
    ].sort(),
  );
  const warning = lines.map((l) => JSON.parse(l)).find((l) => l.level === 40);
  assert.ok(warning, 'the migration log reports the collisions');
  assert.match(warning.msg, /2 lead\(s\) share their number/);
  assert.deepEqual(warning.collisions.map((c: { leadId: string }) => c.leadId).sort(), [older, third].sort());
  assert.ok(!lines.join('\n').includes('2345'), 'no phone number in the log');

  // Deleting one of the two settles it; the row of a deleted marked lead goes with it.
  await pool.query('DELETE FROM leads WHERE id = $1', [older]);
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM lead_phone_collisions')).rows[0].n, 1);
});
