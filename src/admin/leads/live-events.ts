import pg from 'pg';
import type { Pool } from '../../db/pool.ts';
import type { Logger } from '../../shared/logger.ts';
import { ListenerLease } from './live-listener-lease.ts';

// The dashboard's live updates (docs/DASHBOARD.md): one LISTEN connection per process, opened when
// the first page subscribes, on the channel migration 011's triggers notify. A lost connection is
// reopened (and LISTEN issued again) with a growing pause; subscribers are then told to `resync`,
// because notifications sent while nobody listened are gone: the page refetches what it shows.
// While it has subscribers the process holds a lease in `live_listeners` (live-listener-lease.ts):
// without one anywhere, the triggers do not notify at all.

export const LIVE_CHANNEL = 'leadintake_live';

export type LiveEvent =
  | {
      kind: 'lead.created' | 'lead.status' | 'lead.deleted' | 'message' | 'call' | 'plan' | 'integration';
      workspaceId: string;
      leadIds: string[] | null;
    }
  | { kind: 'resync'; workspaceId: string; leadIds: null };

type Subscriber = (event: LiveEvent) => void;

export class LiveEvents {
  readonly #pool: Pool;
  readonly #log: Logger;
  readonly #subscribers = new Map<string, Set<Subscriber>>();
  #client: pg.Client | null = null;
  #connecting: Promise<void> | null = null;
  #retryMs = 100;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;
  readonly #lease: ListenerLease;

  constructor(pool: Pool, log: Logger) {
    this.#pool = pool;
    this.#log = log;
    this.#lease = new ListenerLease(pool, log);
  }

  #watched = () => this.#subscribers.size > 0 && !this.#closed;

  /** Calls `fn` for each change of the workspace; returns the unsubscribe function. Resolves once listening. */
  async subscribe(workspaceId: string, fn: Subscriber): Promise<() => void> {
    let set = this.#subscribers.get(workspaceId);
    if (!set) this.#subscribers.set(workspaceId, (set = new Set()));
    set.add(fn);
    await this.#ensureListening();
    await this.#lease.sync(this.#watched);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.#subscribers.delete(workspaceId);
      if (this.#subscribers.size === 0) void this.#lease.sync(this.#watched);
    };
  }

  /** For tests: drops the LISTEN connection as a network fault would. */
  simulateConnectionLoss(): void {
    this.#client?.emit('error', new Error('simulated connection loss'));
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => {});
    await this.#lease.sync(this.#watched);
  }

  #ensureListening(): Promise<void> {
    if (this.#client || this.#closed) return Promise.resolve();
    return (this.#connecting ??= this.#connect().finally(() => (this.#connecting = null)));
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ ...this.#pool.options, application_name: 'leadintake-live' } as pg.ClientConfig);
    client.on('error', (err) => this.#lost(client, err));
    client.on('end', () => this.#lost(client, new Error('connection ended')));
    client.on('notification', (n) => this.#dispatch(n.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${LIVE_CHANNEL}`);
    } catch (err) {
      this.#lost(client, err as Error);
      return;
    }
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    const reconnected = this.#retryMs > 100;
    this.#client = client;
    this.#retryMs = 100;
    if (reconnected) {
      // A restarted PostgreSQL may have lost the lease (an unlogged table): write it before the
      // pages refetch, or changes made between their refetch and the lease would not be announced.
      await this.#lease.sync(this.#watched);
      this.#broadcastResync();
    }
  }

  #lost(client: pg.Client, err: Error): void {
    if (client !== this.#client && this.#client !== null) return;
    if (this.#client === client) this.#client = null;
    void client.end().catch(() => {});
    if (this.#closed || this.#subscribers.size === 0 || this.#timer) return;
    this.#log.warn({ err: err.message, retryMs: this.#retryMs }, 'live updates: LISTEN connection lost; reconnecting');
    this.#retryMs = Math.min(this.#retryMs * 2, 5_000);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#ensureListening();
    }, this.#retryMs);
    this.#timer.unref();
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

  #broadcastResync(): void {
    for (const [workspaceId, set] of this.#subscribers)
      for (const fn of set) fn({ kind: 'resync', workspaceId, leadIds: null });
  }
}
