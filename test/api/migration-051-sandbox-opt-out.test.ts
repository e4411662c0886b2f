import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, it } from 'node:test';
import { migrate, readMigrations } from '../../src/db/migrate.ts';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { MIGRATION_DATA_STEPS } from '../../src/runtime.ts';
import { adminUrl } from '../helpers/test-db.ts';

// Migration 051 on a database where sandbox leads had opted out before it: their entries leave the
// do-not-contact list, unless a live lead with the number opted out too (the entry then names it);
// an operator's entry stays.

let admin: Pool;
let name: string;
let pool: Pool;

before(async () => {
  admin = createPool(adminUrl(), 1);
  name = `leadintake_mig51_${crypto.randomBytes(6).toString('hex')}`;
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

it("removes the entries sandbox opt-outs made, keeps a live lead's and an operator's", async () => {
  const all = readMigrations(MIGRATION_DATA_STEPS);
  await migrate(
    pool,
    all.filter((m) => m.version < 51),
  );
  const ws = (
    await pool.query(`INSERT INTO workspaces (slug, name, channel) VALUES ('a', 'a', 'whatsapp') RETURNING id`)
  ).rows[0].id as string;
  const lead = async (phone: string, livemode: boolean) =>
    (
      await pool.query(
        `INSERT INTO leads (workspace_id, name, phone, phone_normalized, consented_at, livemode)
         VALUES ($1, 'Ada', $2, $2, now(), $3) RETURNING id`,
        [ws, phone, livemode],
      )
    ).rows[0].id as string;
  const optOut = (id: string, minutesAgo: number) =>
    pool.query(`UPDATE leads SET opted_out_at = now() - make_interval(mins => $2) WHERE id = $1`, [id, minutesAgo]);

  // Both opted out, the sandbox lead first: before 051 the entry names the sandbox lead.
  const [bothSandbox, bothLive] = [await lead('+15550100001', false), await lead('+15550100001', true)];
  await optOut(bothSandbox, 30);
  await optOut(bothLive, 20);
  const onlySandbox = await lead('+15550100002', false);
  await optOut(onlySandbox, 10);
  await pool.query(
    `INSERT INTO suppressed_numbers (workspace_id, phone_e164, source) VALUES ($1, '+15550100003', 'operator')`,
    [ws],
  );
  const listed = async () =>
    (await pool.query('SELECT phone_e164, source, lead_id FROM suppressed_numbers ORDER BY phone_e164')).rows;
  assert.deepEqual(
    (await listed()).map((r) => r.lead_id),
    [bothSandbox, onlySandbox, null],
  );

  await migrate(pool, all);
  assert.deepEqual(await listed(), [
    { phone_e164: '+15550100001', source: 'opt_out', lead_id: bothLive },
    { phone_e164: '+15550100003', source: 'operator', lead_id: null },
  ]);
  // From now on a sandbox opt-out adds nothing; a live one still does.
  await optOut(await lead('+15550100004', false), 0);
  await optOut(await lead('+15550100005', true), 0);
  assert.deepEqual(
    (await listed()).map((r) => r.phone_e164),
    ['+15550100001', '+15550100003', '+15550100005'],
  );
});
