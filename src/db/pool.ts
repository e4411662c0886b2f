import pg from 'pg';
import type { Logger } from '../shared/logger.ts';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that can run a query: the pool itself or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

// bigint columns (bigserial ids, counts) come back as strings by default; our values fit in
// a double, and numbers are what callers expect.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

// A database host that does not answer at all (a failover in progress, a network partition)
// fails a new connection after this instead of leaving the request to wait for the OS's TCP
// timeout; a refused connection fails at once anyway.
const CONNECT_TIMEOUT_MS = 5_000;
// TCP keepalive probes after this much silence, so a connection whose peer vanished without a
// FIN (a failover behind a proxy) is found dead instead of being handed out as healthy.
const KEEPALIVE_DELAY_MS = 10_000;
/** How long end() waits for its connections to be closed (a dead peer never answers). */
const END_WAIT_MS = 2_000;

/**
 * A pg pool that no database fault can take the process down with. pg-pool listens for errors
 * only on idle clients (and drops them); a client that is checked out (a transaction, the outbox
 * relay, a turn's lead lock) emits its connection's loss — a terminated backend (57P01), a
 * restart, a dropped socket — as an 'error' event with nobody listening, which Node turns into
 * an uncaught exception. Every client therefore gets a listener of its own as it connects: the
 * loss is logged, the client becomes unqueryable (its next query rejects), and pg-pool discards
 * it on release instead of handing it out again. The next checkout opens a fresh connection.
 */
export function createPool(connectionString: string, max: number, applicationName = 'leadintake', log?: Logger): Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    application_name: applicationName,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
  });
  const open = new Set<pg.PoolClient>();
  pool.on('connect', (client) => {
    open.add(client);
    client.once('end', () => open.delete(client));
    client.on('error', (err) => log?.warn({ err, pool: applicationName }, 'database connection lost'));
  });
  // Also raised for an idle client losing its connection (after the listener above has logged it);
  // pg-pool has already removed that client.
  pool.on('error', () => {});
  // pg-pool's end() resolves once it has asked each connection to close, not once they are closed:
  // a database stopped right after (the embedded one, at shutdown) would still cut them, and each
  // would log its loss. Ours waits for the connections to end.
  const end = pool.end.bind(pool);
  pool.end = (async () => {
    const closing = [...open].map((c) => new Promise((resolve) => c.once('end', resolve)));
    await end();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise((resolve) => (timer = setTimeout(resolve, END_WAIT_MS).unref()));
    await Promise.race([Promise.all(closing), bound]);
    clearTimeout(timer);
  }) as typeof pool.end;
  return pool;
}

/**
 * Runs fn inside BEGIN/COMMIT on one client; rolls back and rethrows on error. A client whose
 * ROLLBACK fails (its connection is gone, or it is in a state nobody can vouch for) is discarded.
 */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    throw err;
  } finally {
    client.release(broken);
  }
}

// How a query can fail for its connection rather than for what it asked (pg reports the socket's
// and the pool's failures by message alone):
// - `lost`: the connection broke under the query or before it: 57P01 backend terminated by an
//   administrator (a failover, a restart, pg_terminate_backend, a proxy's cut), 57P02 crash of
//   another backend, class 08 connection exceptions, a reset socket, a client already known dead.
// - `unreachable`: no connection could be had: refused, 57P03 the server starting up or shutting
//   down, no answer within CONNECT_TIMEOUT_MS, no pooled connection free in that time.
const LOST_CODES = new Set(['57P01', '57P02', 'ECONNRESET', 'EPIPE']);
const LOST_MESSAGES = new Set(['Connection terminated unexpectedly']);
const UNREACHABLE_CODES = new Set(['57P03', 'ECONNREFUSED']);
const UNREACHABLE_MESSAGES = new Set([
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
]);

export type ConnectionFault = 'lost' | 'unreachable';

/**
 * Whether a query failed because of its connection, not because of what it asked: the same
 * statement on another connection may well succeed (`lost`), or no connection can be had now
 * (`unreachable`). Null for every other error.
 */
export function connectionFault(err: unknown): ConnectionFault | null {
  if (!(err instanceof Error)) return null;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNREACHABLE_CODES.has(code)) return 'unreachable';
    if (LOST_CODES.has(code) || code.startsWith('08')) return 'lost';
  }
  if (UNREACHABLE_MESSAGES.has(err.message)) return 'unreachable';
  if (LOST_MESSAGES.has(err.message) || err.message.endsWith('is not queryable')) return 'lost';
  return null;
}

/**
 * Waits before each new try of a call whose connection was lost: the next pass of the event loop
 * (by then the pool has read the notices of the other connections that died with it, and dropped
 * them), then 25 ms, then 100 ms (a backend that was just told to stop may take that long to say
 * so). A failover or a restart kills every pooled connection at once, and each is only found dead
 * when its notice is read or a statement is sent on it.
 */
const RETRY_DELAYS_MS = [0, 25, 100];

/**
 * Runs `fn` and, while it fails because its connection was lost, up to three times more. Only for
 * calls that are safe to run twice (a read, an atomic statement whose repetition the caller
 * accounts for): one whose commit went through before the connection broke runs again.
 */
export async function retryOnLostConnection<T>(fn: () => Promise<T>): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await fn();
    } catch (err) {
      const delay = RETRY_DELAYS_MS[tries];
      if (delay === undefined || connectionFault(err) !== 'lost') throw err;
      await new Promise((resolve) => (delay === 0 ? setImmediate(resolve) : setTimeout(resolve, delay)));
    }
  }
}
