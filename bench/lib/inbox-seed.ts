import type { Pool } from '../../src/db/pool.ts';

// The large workspace of the dashboard benches (bench/suite/inbox.ts, bench/suite/analytics.ts): `leads`
// leads, one every 30 seconds back from now (1,000,000 span 347 days), named and numbered in
// creation order, with statuses spread like a busy workspace's.
export async function seedLeads(pool: Pool, workspaceId: string, leads: number): Promise<void> {
  await pool.query(
    `INSERT INTO leads (workspace_id, name, phone, phone_normalized,
      email, consented_at, status, created_at, updated_at)
     SELECT $1, 'Lead ' || n, '+1444' || lpad(n::text, 8, '0'),
     '+1444' || lpad(n::text, 8, '0'), 'lead' || n || '@example.com', now(),
            (ARRAY['booked','unqualified','in_conversation','in_conversation','unqualified',
                   'booked','new','needs_human','unqualified','booked'])[1 + n % 10],
            now() - make_interval(secs => ($2::int - n) * 30), now() - make_interval(secs => ($2::int - n) * 30)
       FROM generate_series(1, $2::int) AS n`,
    [workspaceId, leads],
  );
}
