import pg from 'pg';
import type { Pool } from '../../db/pool.ts';
import { AppError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import { ListenerLease } from './live-listener-lease.ts';

// The dashboard's live updates (docs/DASHBOARD.md): one LISTEN connection per process, opened when
// a page subscribes, on the channel migration 011's triggers notify. While it has subscribers the
// process holds a lease in `live_listeners` (live-listener-lease.ts): without one anywhere, the
// triggers do not notify at all. A subscription starts only once both hold, and whenever either
// is lost (the connection drops, a renewal fails) every subscriber is told `down`: notifications
// may have gone unheard, so its page must say it is offline and reconnect, and refetch once live.

export const LIVE_CHANNEL = 'leadintake_live';

export type LiveEvent =
  | {
      kind: 'lead.created' | 'lead.status' | 'lead.deleted' | 'message' | 'call' | 'plan' | 'integration';
      workspaceId: string;
      leadIds: string[] | null;
    }
  | { kind: 'down'; workspaceId: string; leadIds: null };

type Subscriber = (event: LiveEvent) => void;

export class LiveEvents {
  readonly #pool: Pool;
  readonly #log: Logger;
  readonly #subscribers = new Map<string, Set<Subscriber>>();
  #client: pg.Client | null = null;
  #connecting: Promise<pg.Client> | null = null;
  #closed = false;
  readonly #lease: ListenerLease;

  constructor(pool: Pool, log: Logger) {
    this.#pool = pool;
    this.#log = log;
    this.#lease = new ListenerLease(pool, log, () => this.#down());
  }

  #watched = () => this.#subscribers.size > 0 && !this.#closed;

  /**
   * Calls `fn` for each change of the workspace; returns the unsubscribe function. Resolves once
   * every change from then on will be heard; rejects (`service_busy`) when the database does not let it.
   */
  async subscribe(workspaceId: string, fn: Subscriber): Promise<() => void> {
    let set = this.#subscribers.get(workspaceId);
    if (!set) this.#subscribers.set(workspaceId, (set = new Set()));
    set.add(fn);
    const unsubscribe = () => {
      set.delete(fn);
      if (set.size === 0 && this.#subscribers.get(workspaceId) === set) this.#subscribers.delete(workspaceId);
      if (this.#subscribers.size === 0) void this.#lease.sync(this.#watched).catch(() => {});
    };
    try {
      await this.#listening();
      await this.#lease.sync(this.#watched);
    } catch (err) {
      unsubscribe();
      this.#log.warn({ err: (err as Error).message }, 'live updates: cannot listen; the page retries');
      throw new AppError('service_busy', { retryAfterSeconds: 2 });
    }
    return unsubscribe;
  }

  /** For tests: drops the LISTEN connection as a network fault would. */
  simulateConnectionLoss(): void {
    this.#client?.emit('error', new Error('simulated connection loss'));
  }

  /** For tests: renews the lease now rather than at its interval. */
  simulateLeaseRenewal(): Promise<void> {
    return this.#lease.renew();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => {});
    await this.#lease.sync(this.#watched).catch(() => {});
  }

  #listening(): Promise<pg.Client> {
    if (this.#closed) return Promise.reject(new Error('closed'));
    if (this.#client) return Promise.resolve(this.#client);
    return (this.#connecting ??= this.#connect().finally(() => (this.#connecting = null)));
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client({ ...this.#pool.options, application_name: 'leadintake-live' } as pg.ClientConfig);
    client.on('error', (err) => this.#lost(client, err));
    client.on('end', () => this.#lost(client, new Error('connection ended')));
    client.on('notification', (n) => this.#dispatch(n.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${LIVE_CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      throw new Error('closed');
    }
    this.#client = client;
    return client;
  }

  #lost(client: pg.Client, err: Error): void {
    if (client !== this.#client) return;
    this.#client = null;
    void client.end().catch(() => {});
    if (this.#closed) return;
    this.#log.warn({ err: err.message }, 'live updates: LISTEN connection lost; pages reconnect');
    this.#down();
  }

  /** Tells every subscriber that changes may have gone unheard (their pages reconnect and refetch). */
  #down(): void {
    for (const [workspaceId, set] of this.#subscribers)
      for (const fn of set) fn({ kind: 'down', workspaceId, leadIds: null });
  }

  #dispatch(payload: string | undefined): void {
    let e: { w?: string; k?: string; l?: string[] | null };
    try {
      e = JSON.parse(payload ?? '');
    } catch {
      return;
    }
    if (!e.w || !e.k) return;
    const event = { kind: e.k, workspaceId: e.w, leadIds: e.l ?? null } as LiveEvent;
    for (const fn of this.#subscribers.get(e.w) ?? []) fn(event);
  }
}
