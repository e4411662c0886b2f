import crypto from 'node:crypto';
import { createPool, type Pool } from '../../src/db/pool.ts';

export interface TestDatabase {
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

/** A fresh database cloned from the migrated template that scripts/run-tests.ts prepared. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.LEADINTAKE_TEST_ADMIN_URL;
  const template = process.env.LEADINTAKE_TEST_TEMPLATE;
  if (!adminUrl || !template)
    throw new Error('Run the tests with `npm test` (scripts/run-tests.ts prepares the database).');
  const name = `leadintake_t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = createPool(adminUrl, 1);
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  // Small: two files run at once, and the machine's PostgreSQL allows 100 connections in all.
  const pool = createPool(url, 10);
  return {
    url,
    pool,
    drop: async () => {
      await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** A database server URL without a database, for tests that make their own empty one. */
export function adminUrl(): string {
  const url = process.env.LEADINTAKE_TEST_ADMIN_URL;
  if (!url) throw new Error('Run the tests with `npm test`.');
  return url;
}
