import type { Queryable } from '../db/pool.ts';

// Sandbox leads are test data: they are deleted 7 days after their submission, with everything
// that hangs off them (events, call sessions, turns and messages cascade; integration-log rows
// keep their own retention with the lead reference cleared). Run by the maintenance pass
// (src/maintenance.ts) of every `serve` process; deletes are idempotent, so several processes
// pruning at once only repeat each other's work.

export const SANDBOX_RETENTION_DAYS = 7;
const BATCH = 1000;

/** Deletes sandbox leads older than the retention, in batches; returns how many went. */
export async function pruneSandboxLeads(db: Queryable): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { rowCount } = await db.query({
      name: 'prune-sandbox-leads',
      text: `DELETE FROM leads WHERE id IN (
               SELECT id FROM leads WHERE NOT livemode AND created_at < now() - make_interval(days => $1) LIMIT $2)`,
      values: [SANDBOX_RETENTION_DAYS, BATCH],
    });
    deleted += rowCount ?? 0;
    if ((rowCount ?? 0) < BATCH) return deleted;
  }
}
