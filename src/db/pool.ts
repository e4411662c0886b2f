import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that can run a query: the pool itself or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

// bigint columns (bigserial ids, counts) come back as strings by default; our values fit in
// a double, and numbers are what callers expect.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function createPool(connectionString: string, max: number, applicationName = 'leadintake'): Pool {
  const pool = new pg.Pool({ connectionString, max, application_name: applicationName, idleTimeoutMillis: 30_000 });
  // An idle client losing its connection (a database restart) must not crash the process;
  // the next query gets a fresh connection.
  pool.on('error', () => {});
  return pool;
}

/** Runs fn inside BEGIN/COMMIT on one client; rolls back and rethrows on error. */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
