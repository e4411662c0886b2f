import { useSyncExternalStore } from 'react';

// The workspace's live updates (Server-Sent Events, src/admin/live-routes.ts), read with fetch
// rather than EventSource: an EventSource gives up for good on any answer but 200 (a restarting
// service answers 503) and cannot tell a 401 from an outage. Here every failure but "signed out"
// or "no access" is retried, with a growing pause, forever; while the stream is down the pages
// poll, and a new stream's `ready` event makes them refetch what they show.

/** `live`: the stream is open; `offline`: reconnecting (pages poll); `ended`: signed out or no longer a member. */
export type LiveStatus =
  | { state: 'live' }
  | { state: 'offline' }
  | { state: 'ended'; reason: 'signed_out' | 'no_access' };

const BACKOFF_MS = [1_000, 2_000, 4_000, 8_000, 15_000, 30_000];
/** How often the pages refetch while the stream is down. */
const POLL_MS = 15_000;
/** A stream silent this long past its heartbeat is taken for dead (a network change leaves it hanging). */
const SILENCE_GRACE_MS = 10_000;

type Subscriber = (leadIds: string[] | null) => void;

let status: LiveStatus = { state: 'live' };
const statusListeners = new Set<() => void>();
function setStatus(next: LiveStatus): void {
  const same =
    next.state === status.state &&
    (next.state !== 'ended' || status.state !== 'ended' || next.reason === status.reason);
  if (same) return;
  status = next;
  for (const fn of statusListeners) fn();
}

/** The live stream's state, for the offline banner and the shell. */
export function useLiveStatus(): LiveStatus {
  const subscribe = (fn: () => void) => {
    statusListeners.add(fn);
    return () => statusListeners.delete(fn);
  };
  return useSyncExternalStore(subscribe, () => status);
}

class WorkspaceStream {
  readonly subscribers = new Map<Subscriber, (kind: string) => boolean>();
  #stopped = false;
  #ended = false;
  #attempt = 0;
  #request: AbortController | null = null;
  #wake: (() => void) | null = null;
  #poll: number | undefined;

  constructor(private readonly url: string) {
    addEventListener('online', this.#retryNow);
    addEventListener('offline', this.#dropStream);
    void this.#run();
  }

  stop(): void {
    this.#stopped = true;
    removeEventListener('online', this.#retryNow);
    removeEventListener('offline', this.#dropStream);
    this.#request?.abort();
    this.#wake?.();
    clearInterval(this.#poll);
  }

  #notify(kind: string, leadIds: string[] | null): void {
    for (const [fn, wanted] of this.subscribers) {
      if (kind === '*' || wanted(kind)) fn(leadIds);
    }
  }

  // A network change: try at once rather than after the current pause.
  readonly #retryNow = () => {
    this.#attempt = 0;
    this.#wake?.();
  };
  readonly #dropStream = () => this.#request?.abort();

  #offline(): void {
    if (this.#stopped || this.#ended) return;
    setStatus({ state: 'offline' });
    this.#poll ??= window.setInterval(() => this.#notify('*', null), POLL_MS);
  }

  async #run(): Promise<void> {
    while (!this.#stopped && !this.#ended) {
      const request = (this.#request = new AbortController());
      try {
        const res = await fetch(this.url, {
          headers: { accept: 'text/event-stream' },
          credentials: 'same-origin',
          cache: 'no-store',
          signal: request.signal,
        });
        if (res.status === 401) this.#end('signed_out');
        else if (res.status === 403 || res.status === 404) this.#end('no_access');
        else if (res.ok && res.body) await this.#read(res.body, request);
      } catch {
        // Unreachable, reset or aborted: reconnect below.
      }
      request.abort();
      if (this.#stopped || this.#ended) break;
      this.#offline();
      const base = BACKOFF_MS[Math.min(this.#attempt++, BACKOFF_MS.length - 1)]!;
      // Spread out, so the pages of a restarted service do not all come back in the same instant.
      await new Promise<void>((resolve) => {
        const pause = base * (0.8 + Math.random() * 0.4);
        const timer = window.setTimeout(() => {
          this.#wake = null;
          resolve();
        }, pause);
        this.#wake = () => {
          clearTimeout(timer);
          this.#wake = null;
          resolve();
        };
      });
    }
  }

  #end(reason: 'signed_out' | 'no_access'): void {
    this.#ended = true;
    clearInterval(this.#poll);
    setStatus({ state: 'ended', reason });
  }

  /** Reads events until the stream closes, fails or stays silent past its heartbeat. */
  async #read(body: ReadableStream<Uint8Array>, request: AbortController): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let silentAfterMs = 60_000 + SILENCE_GRACE_MS;
    let watchdog = window.setTimeout(() => request.abort(), silentAfterMs);
    let buffer = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        clearTimeout(watchdog);
        watchdog = window.setTimeout(() => request.abort(), silentAfterMs);
        buffer += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, '');
          const event = parseEvent(block);
          if (!event) continue;
          if (event.type === 'ready') {
            const heartbeatMs = event.data.heartbeatMs;
            if (typeof heartbeatMs === 'number') silentAfterMs = heartbeatMs * 2 + SILENCE_GRACE_MS;
            this.#attempt = 0;
            clearInterval(this.#poll);
            this.#poll = undefined;
            setStatus({ state: 'live' });
            // What happened while disconnected (or before this page subscribed) is refetched.
            this.#notify('*', null);
          } else if (event.type === 'end') {
            this.#end(event.data.reason === 'no_access' ? 'no_access' : 'signed_out');
            return;
          } else if (event.type === 'change') {
            const kind = typeof event.data.kind === 'string' ? event.data.kind : '*';
            const leadIds = Array.isArray(event.data.leadIds) ? (event.data.leadIds as string[]) : null;
            this.#notify(kind, leadIds);
          }
        }
      }
    } finally {
      clearTimeout(watchdog);
      void reader.cancel().catch(() => {});
    }
  }
}

function parseEvent(block: string): { type: string; data: Record<string, unknown> } | null {
  let type = 'message';
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith('event:')) type = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (data.length === 0) return null;
  try {
    return { type, data: JSON.parse(data.join('\n')) as Record<string, unknown> };
  } catch {
    // Not ours to understand: refetch everything.
    return { type: 'change', data: { kind: '*', leadIds: null } };
  }
}

// One stream per workspace, shared by the pages and components that watch it: a session may hold
// only a few streams open (LIVE_STREAMS_PER_SESSION).
const streams = new Map<string, WorkspaceStream>();

/**
 * Calls `onChange(leadIds)` for each change of the workspace (null: anything may have changed, refetch).
 * `kinds`: only changes of these kinds (e.g. `['integration']`, a new integration-log entry); by
 * default every kind but `integration`, which only the Logs page shows (the inbox would refetch
 * for each provider exchange otherwise). Called with null on each (re)connection and, while the
 * stream is down, every POLL_MS.
 */
export function watchWorkspace(slug: string, onChange: Subscriber, kinds?: readonly string[]): () => void {
  const url = `/api/admin/workspaces/${encodeURIComponent(slug)}/events`;
  let stream = streams.get(url);
  if (!stream) streams.set(url, (stream = new WorkspaceStream(url)));
  const subscriber: Subscriber = (ids) => onChange(ids);
  stream.subscribers.set(subscriber, (kind) => (kinds ? kinds.includes(kind) : kind !== 'integration'));
  const mine = stream;
  return () => {
    mine.subscribers.delete(subscriber);
    if (mine.subscribers.size > 0) return;
    mine.stop();
    if (streams.get(url) === mine) streams.delete(url);
    // Nobody watches: nothing is stale, so no banner.
    if (streams.size === 0) setStatus({ state: 'live' });
  };
}
