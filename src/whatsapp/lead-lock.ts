import type { Pool, PoolClient } from '../db/pool.ts';

// One turn at a time per lead, across every worker process: a session-level advisory lock held
// on a connection of the turn's own for the whole turn, which also runs the turn's queries (one
// connection per running turn). If the process dies, PostgreSQL drops the connection and with it
// the lock at once, so the retried turn never waits for a lease to lapse. Two leads whose ids
// hash alike merely take turns; correctness never depends on the hash.
const LOCK_NAMESPACE = 741_322_005;

export interface LeadLock {
  /** The connection holding the lock; the turn's queries run on it. */
  db: PoolClient;
  /**
   * Aborts when the connection is lost (a terminated backend, a restart): the lock went with it,
   * so the turn must stop (and be retried) instead of going on, e.g. to a send, unlocked.
   */
  lost: AbortSignal;
  release(): Promise<void>;
}

/**
 * Waits until no other turn of this lead runs, then holds the lead until release(). `startTurn`:
 * the lock is for an agent turn, which also clears the lead's "turn requested" flag once the lock
 * is held (in the same round trip: migrations/023's lead_lock_for_turn).
 */
export async function lockLead(pool: Pool, leadId: string, opts: { startTurn?: boolean } = {}): Promise<LeadLock> {
  const client = await pool.connect();
  try {
    await client.query({ name: 'lead-lock', text: 'SELECT lead_lock_for_turn($1, $2, $3)', values: [LOCK_NAMESPACE, leadId, opts.startTurn === true] });
  } catch (err) {
    client.release(err as Error);
    throw err;
  }
  const lost = new AbortController();
  const onError = (err: Error) => lost.abort(err);
  client.on('error', onError);
  let released = false;
  return {
    db: client,
    lost: lost.signal,
    async release() {
      if (released) return;
      released = true;
      client.removeListener('error', onError);
      try {
        await client.query({ name: 'lead-unlock', text: 'SELECT pg_advisory_unlock($1, hashtext($2))', values: [LOCK_NAMESPACE, leadId] });
        client.release();
      } catch (err) {
        // Destroying the connection frees the lock too.
        client.release(err as Error);
      }
    },
  };
}

/** BEGIN … COMMIT on the turn's own connection (ROLLBACK and rethrow on error). */
export async function inTransaction<T>(db: PoolClient, fn: (tx: PoolClient) => Promise<T>): Promise<T> {
  await db.query('BEGIN');
  try {
    const result = await fn(db);
    await db.query('COMMIT');
    return result;
  } catch (err) {
    await db.query('ROLLBACK').catch(() => {});
    throw err;
  }
}
