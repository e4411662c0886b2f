import type { Pool, PoolClient } from '../../src/db/pool.ts';

// For tests of how PostgreSQL plans on tables that grow (migrations/026): many leads in one
// statement, and a session's table counters made visible to pg_stat_user_tables at once instead
// of at PostgreSQL's next periodic flush.

/**
 * Leads number `from` … `from + n - 1` of the workspace (names and phones from the number), in one
 * statement. Their phones are +1 556…, a prefix uniquePhone() never makes: with +1 555 they
 * collided with its numbers in a test process whose pid ended in 000 (a duplicate-phone error in CI).
 */
export async function insertBulkLeads(
  db: Pool | PoolClient,
  workspaceId: string,
  from: number,
  n: number,
): Promise<void> {
  await db.query(
    `INSERT INTO leads (workspace_id, name, phone, phone_normalized, consented_at)
     SELECT $1, 'Bulk ' || i, '+1556' || lpad(i::text, 7, '0'), '+1556' || lpad(i::text, 7, '0'), now()
       FROM generate_series($2::int, $2::int + $3::int - 1) AS i`,
    [workspaceId, from, n],
  );
}

/** Flushes the session's counts (seq_tup_read, n_mod_since_analyze, …) to the statistics. */
export async function flushTableCounts(client: PoolClient): Promise<void> {
  await client.query('SELECT pg_stat_force_next_flush()');
  await client.query('SELECT 1'); // the session flushes when it goes idle after the line above
}
