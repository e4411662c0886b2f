import type { Pool } from '../db/pool.ts';

// One turn at a time per lead, across every worker process: a session-level advisory lock held
// on a connection of its own for the whole turn. If the process dies, PostgreSQL drops the
// connection and with it the lock at once, so the retried turn never waits for a lease to lapse.
// Two leads whose ids hash alike merely take turns; correctness never depends on the hash.
const LOCK_NAMESPACE = 741_322_005;

export interface LeadLock {
  release(): Promise<void>;
}

/** Waits until no other turn of this lead runs, then holds the lead until release(). */
export async function lockLead(pool: Pool, leadId: string): Promise<LeadLock> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [LOCK_NAMESPACE, leadId]);
  } catch (err) {
    client.release(err as Error);
    throw err;
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      try {
        await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_NAMESPACE, leadId]);
        client.release();
      } catch (err) {
        // Destroying the connection frees the lock too.
        client.release(err as Error);
      }
    },
  };
}
