import type { Pool, PoolClient, Queryable } from '../db/pool.ts';

// One turn at a time per lead, across every worker process: a session-level advisory lock held
// on a connection of the turn's own for the whole turn, which also runs the turn's queries (one
// connection per running turn). If the process dies, PostgreSQL drops the connection and with it
// the lock at once, so the retried turn never waits for a lease to lapse. Two leads whose ids
// hash alike merely take turns; correctness never depends on the hash.
// In leads/, not whatsapp/: an operator's reply and a lead's erasure take the same lock, so they
// never interleave with a turn.
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
    await client.query({
      name: 'lead-lock',
      text: 'SELECT lead_lock_for_turn($1, $2, $3)',
      values: [LOCK_NAMESPACE, leadId, opts.startTurn === true],
    });
  } catch (err) {
    client.release(err as Error);
    throw err;
  }
  return held(client, [leadId]);
}

/** The turn locks of several leads, held by one connection. */
export interface LeadLocks extends LeadLock {
  /** The leads whose locks were free and are now held, in the order asked. */
  leadIds: string[];
}

/**
 * For agent turns of several leads at once (first contacts in batches): takes the locks that are
 * free, without waiting for the others, and clears those leads' "turn requested" flags, in one
 * round trip (migrations/024's lead_try_lock_for_turns). A lead left out is run on its own.
 */
export async function tryLockLeads(pool: Pool, leadIds: string[]): Promise<LeadLocks> {
  // A session lock is re-entrant: a lead asked twice would be locked, and held, twice.
  const unique = [...new Set(leadIds)];
  const client = await pool.connect();
  let taken: string[];
  try {
    const { rows } = await client.query<{ lead: string }>({
      name: 'lead-try-lock-many',
      text: 'SELECT lead FROM lead_try_lock_for_turns($1, $2::text[]) AS lead',
      values: [LOCK_NAMESPACE, unique],
    });
    taken = rows.map((r) => r.lead);
  } catch (err) {
    client.release(err as Error);
    throw err;
  }
  return { ...held(client, taken), leadIds: taken };
}

function held(client: PoolClient, leadIds: string[]): LeadLock {
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
        if (leadIds.length === 1) {
          await client.query({
            name: 'lead-unlock',
            text: 'SELECT pg_advisory_unlock($1, hashtext($2))',
            values: [LOCK_NAMESPACE, leadIds[0]],
          });
        } else if (leadIds.length > 1) {
          await client.query({
            name: 'lead-unlock-many',
            text: 'SELECT pg_advisory_unlock($1, hashtext(l)) FROM unnest($2::text[]) AS l',
            values: [LOCK_NAMESPACE, leadIds],
          });
        }
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

/**
 * Locks the lead's row until the transaction ends: the first lock of every transaction that
 * changes a lead's conversation or its contact plan (docs/WHATSAPP.md, "Lock order"; the plan's
 * triggers take the lead's row before the plan's). False when there is no such lead.
 */
export async function lockLeadRow(db: Queryable, leadId: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'lead-lock-row',
    text: 'SELECT 1 FROM leads WHERE id = $1 FOR UPDATE',
    values: [leadId],
  });
  return rowCount === 1;
}
