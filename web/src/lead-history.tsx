import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { api, type LeadPage, type Schemas } from './api.ts';
import { dateTime, describeEvent } from './format.ts';

// The lead page's history in pages: the lead page brings the newest 50 messages and events;
// "Load older" fetches the page before (GET …/messages|timeline?before=), and the provider
// traffic is fetched only when its section is opened. The thread scrolls in a region of its own
// so the composer below it stays in reach however long the conversation is.

type Message = LeadPage['messages'][number];
type Event = LeadPage['timeline'][number];
type TrafficPage = Schemas['AdminLeadProviderTraffic'];
type Traffic = TrafficPage['entries'][number];

/**
 * The items shown: the older pages loaded so far, then the newest page. A refetch of the newest
 * page (after a live change) adds what is new and updates what changed (a delivery status); when
 * it does not reach what was shown (a long time offline) it starts over from it.
 */
function usePaged<T extends { id: number }>(
  first: T[],
  firstCursor: string | null,
  url: string,
  key: 'messages' | 'timeline',
) {
  const [state, setState] = useState({ items: first, cursor: firstCursor });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  useEffect(() => {
    setState((s) => {
      const fresh = new Map(first.map((i) => [i.id, i]));
      const known = new Set(s.items.map((i) => i.id));
      const oldest = first[0];
      const gap = oldest !== undefined && !known.has(oldest.id) && firstCursor !== null;
      if (s.items.length === 0 || gap) return { items: first, cursor: firstCursor };
      const kept = s.items.map((i) => fresh.get(i.id) ?? i);
      return { items: [...kept, ...first.filter((i) => !known.has(i.id))], cursor: s.cursor };
    });
  }, [first, firstCursor]);
  const loadOlder = async () => {
    if (!state.cursor) return;
    setBusy(true);
    try {
      type Answer = { olderCursor: string | null } & Record<typeof key, T[]>;
      const r = await api<Answer>('GET', `${url}?before=${encodeURIComponent(state.cursor)}`);
      setState((s) => {
        const known = new Set(s.items.map((i) => i.id));
        return { items: [...r[key].filter((i) => !known.has(i.id)), ...s.items], cursor: r.olderCursor };
      });
      setError('');
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return { ...state, busy, error, loadOlder };
}

function Older({
  what,
  count,
  more,
  busy,
  onClick,
}: {
  what: string;
  count: number;
  more: boolean;
  busy: boolean;
  onClick: () => void;
}) {
  return (
    <p className="history-more">
      {more ? (
        <>
          The latest {count} {what}.{' '}
          <button type="button" onClick={onClick} disabled={busy}>
            Load older {what}
          </button>
        </>
      ) : (
        `All ${count} ${what}.`
      )}
    </p>
  );
}

export function Thread({
  base,
  messages,
  olderCursor,
}: {
  base: string;
  messages: Message[];
  olderCursor: string | null;
}) {
  const p = usePaged(messages, olderCursor, `${base}/messages`, 'messages');
  const region = useRef<HTMLDivElement>(null);
  // Newest at the bottom, next to the composer: stay there as messages arrive, unless the operator
  // scrolled up to read; after "Load older" keep the message they were looking at in place.
  const last = useRef({ height: 0, newest: 0, oldest: 0 });
  useLayoutEffect(() => {
    const el = region.current;
    if (!el) return;
    const newest = p.items.at(-1)?.id ?? 0;
    const oldest = p.items[0]?.id ?? 0;
    const was = last.current;
    const atBottom = was.height === 0 || was.height - el.scrollTop - el.clientHeight < 40;
    if (oldest !== was.oldest && newest === was.newest) el.scrollTop += el.scrollHeight - was.height;
    else if (atBottom) el.scrollTop = el.scrollHeight;
    last.current = { height: el.scrollHeight, newest, oldest };
  }, [p.items]);
  return (
    <div className="thread-scroll" ref={region} tabIndex={0} role="region" aria-label="Messages">
      {p.items.length > 0 && (
        <Older what="messages" count={p.items.length} more={p.cursor !== null} busy={p.busy} onClick={p.loadOlder} />
      )}
      {p.error && (
        <p role="alert" className="error">
          {p.error}
        </p>
      )}
      {p.items.length === 0 && <p className="empty">No messages yet.</p>}
      <ol className="thread">
        {p.items.map((m) => (
          <li key={m.id} className={`bubble ${m.direction}`}>
            {m.kind === 'template' && <span className="badge">Template</span>}
            <p>{m.body}</p>
            <small>
              {dateTime(m.createdAt)}
              {m.direction === 'outbound' && ` · ${m.status}`}
              {m.errorMessage && ` · ${m.errorMessage}`}
            </small>
          </li>
        ))}
      </ol>
    </div>
  );
}

export function Timeline({ base, events, olderCursor }: { base: string; events: Event[]; olderCursor: string | null }) {
  const p = usePaged(events, olderCursor, `${base}/timeline`, 'timeline');
  return (
    <>
      <Older what="events" count={p.items.length} more={p.cursor !== null} busy={p.busy} onClick={p.loadOlder} />
      {p.error && (
        <p role="alert" className="error">
          {p.error}
        </p>
      )}
      <ol className="timeline">
        {p.items.map((e) => (
          <li key={e.id}>
            <time dateTime={e.at}>{dateTime(e.at)}</time> {describeEvent(e.type, e.data)}
          </li>
        ))}
      </ol>
    </>
  );
}

/** Provider traffic, newest first, fetched each time the section is opened (it is not live). */
export function ProviderTraffic({ base }: { base: string }) {
  const [entries, setEntries] = useState<Traffic[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [open, setOpen] = useState(false);
  const fetchPage = async (before: string | null) => {
    try {
      const r = await api<TrafficPage>(
        'GET',
        `${base}/provider-traffic${before ? `?before=${encodeURIComponent(before)}` : ''}`,
      );
      setEntries((e) => (before && e ? [...e, ...r.entries] : r.entries));
      setCursor(r.olderCursor);
      setError('');
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <details
      onToggle={(e) => {
        setOpen(e.currentTarget.open);
        if (e.currentTarget.open) void fetchPage(null);
      }}
    >
      <summary>Provider traffic</summary>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {entries === null ? (
        open && <p className="loading">Loading…</p>
      ) : entries.length === 0 ? (
        <p className="empty">No provider traffic.</p>
      ) : (
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Provider</th>
                <th scope="col">Request</th>
                <th scope="col">Status</th>
                <th scope="col">Outcome</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id}>
                  <td>{dateTime(e.createdAt)}</td>
                  <td>
                    {e.provider} {e.direction === 'out' ? '→' : '←'}
                  </td>
                  <td>{e.kind}</td>
                  <td>{e.httpStatus ?? '—'}</td>
                  <td>{e.outcome ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor && (
        <button type="button" onClick={() => void fetchPage(cursor)}>
          Load older traffic
        </button>
      )}
    </details>
  );
}
