import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { attemptTime, stepWords } from './follow-up-words.ts';
import { api, type Inbox, type InboxLead, type Status, type WorkspaceAccess } from './api.ts';
import { duration, since, STATUS_LABELS } from './format.ts';
import { useLatest, useLiveRefresh } from './live.ts';
import { Link } from './link.tsx';
import { useQueryState } from './nav.ts';
import { AlertControls } from './alerts.tsx';
import { OwnerCell, UnreadMark, useNow, WaitingCell } from './inbox-owner.tsx';
import {
  CsvExportLink,
  FILTER_KEYS,
  FilterSummary,
  inboxParams,
  readInboxView,
  SOURCE_LABELS,
} from './inbox-filters.tsx';

// The leads inbox (/admin/<slug>/leads): tabs per status with counts, search, the Sandbox switch,
// a table of the newest leads, more on demand (keyset), live through the workspace's event stream.
// What it shows is in the address (inbox-filters.tsx): a reload or a shared link keeps the view.

const TABS: Array<Status | 'all'> = ['new', 'in_conversation', 'needs_human', 'booked', 'unqualified', 'all'];

export function StatusBadge({ status }: { status: Status }) {
  return <span className={`badge badge-${status}`}>{STATUS_LABELS[status]}</span>;
}

export function InboxPage({ workspace }: { workspace: WorkspaceAccess }) {
  const [query, setQuery] = useQueryState();
  const { tab, search, sandbox, sort, unread, filters } = useMemo(() => readInboxView(query), [query]);
  const searched = searchLongEnough(search) ? search.trim() : '';
  const now = useNow();
  // A choice adds a history entry (back returns to the view before); typing a search adds one
  // when it starts, then changes it, so back does not step through each key.
  const setTab = (t: Status | 'all') => setQuery({ status: t === 'all' ? undefined : t });
  const setSearch = (q: string) => setQuery({ q }, { replace: search !== '' && q !== '' });
  const setSandbox = (on: boolean) => setQuery({ sandbox: String(on) });
  const setUnread = (on: boolean) => setQuery({ unread: on ? 'true' : undefined });
  const setSort = (s: string) => setQuery({ sort: s === 'activity' || s === 'waiting' ? s : undefined });
  const setSource = (s: string) => setQuery({ source: Object.hasOwn(SOURCE_LABELS, s) ? s : undefined });
  const clearFilters = () => setQuery(Object.fromEntries(FILTER_KEYS.map((k) => [k, undefined])));
  // The API's query as a string: the list refetches when it changes, not on every render.
  const apiQuery = inboxParams({ tab, search: searched, sandbox, sort, unread, filters }).toString();
  const [data, setData] = useState<Inbox | null>(null);
  const [more, setMore] = useState<InboxLead[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState('');
  const fetchPage = useCallback(
    (after?: string, limit?: number) => {
      const p = new URLSearchParams(apiQuery);
      if (after) p.set('cursor', after);
      if (limit) p.set('limit', String(limit));
      return api<Inbox>('GET', `/api/admin/workspaces/${workspace.slug}/leads?${p}`);
    },
    [apiQuery, workspace.slug],
  );
  // The rows loaded with Load more, for a live refresh to keep: cutting the list back to its first
  // page would drop the oldest rows (often the leads waiting longest) and move the page under the
  // operator's eyes.
  const loaded = useRef<{ count: number; lastId: string } | null>(null);
  const latest = useLatest();
  const refresh = useCallback(
    (keep: boolean) => {
      const current = latest.begin();
      const shown = keep ? loaded.current : null;
      if (!keep) loaded.current = null;
      fetchFirst(fetchPage, shown).then(
        (d) => {
          if (!current()) return;
          loaded.current = shown && lastRows(d.leads);
          setData(d);
          setMore([]);
          setCursor(d.nextCursor);
          setError('');
        },
        (e: Error) => {
          if (current()) setError(e.message);
        },
      );
    },
    [fetchPage, latest],
  );
  // New filters or search: the first page.
  useEffect(() => refresh(false), [refresh]);
  // Live: any change of the workspace refetches the rows shown.
  useLiveRefresh(
    workspace.slug,
    useCallback(() => refresh(true), [refresh]),
  );
  const leads = [...(data?.leads ?? []), ...more];
  const loadMore = async () => {
    if (!cursor) return;
    const current = latest.join();
    const d = await fetchPage(cursor);
    if (!current()) return;
    loaded.current = lastRows([...leads, ...d.leads]);
    setMore((m) => [...m, ...d.leads]);
    setCursor(d.nextCursor);
  };
  const count = (n: number | undefined) =>
    n === undefined ? '' : n >= (data?.countCap ?? Infinity) ? `${n}+` : String(n);
  return (
    <main>
      <h1>Leads</h1>
      <div className="toolbar">
        <nav aria-label="Lead status" className="tabs">
          {TABS.map((t) => (
            <button
              key={t}
              type="button"
              aria-pressed={tab === t}
              className={t === 'needs_human' && (data?.counts.needs_human ?? 0) > 0 ? 'tab attention' : 'tab'}
              onClick={() => setTab(t)}
            >
              {t === 'all' ? 'All' : STATUS_LABELS[t]} <span className="count">{count(data?.counts[t])}</span>
            </button>
          ))}
        </nav>
        {/* Any status: a booked or unqualified lead that wrote is in no alert, only here and in its dot. */}
        <button type="button" className="tab" aria-pressed={unread} onClick={() => setUnread(!unread)}>
          Unread{unread ? <span className="count"> {count(data?.counts.all)}</span> : null}
        </button>
        <label className="search">
          Search leads{' '}
          <input
            type="search"
            value={search}
            placeholder="Name, phone or e-mail (3+ characters)"
            onChange={(e) => setSearch(e.target.value)}
          />
        </label>
        <label className="sort">
          Sort{' '}
          <select value={sort} onChange={(e) => setSort(e.target.value)}>
            <option value="newest">Newest first</option>
            <option value="activity">Last activity</option>
            <option value="waiting">Waiting longest</option>
          </select>
        </label>
        <label className="source">
          Source{' '}
          <select value={filters.source ?? ''} onChange={(e) => setSource(e.target.value)}>
            <option value="">All sources</option>
            {Object.entries(SOURCE_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={sandbox ?? data?.sandbox ?? false}
            onChange={(e) => setSandbox(e.target.checked)}
          />{' '}
          Sandbox
        </label>
        <AlertControls />
        <CsvExportLink
          slug={workspace.slug}
          params={inboxParams({
            tab,
            search: searched,
            sandbox: sandbox ?? data?.sandbox ?? false,
            sort,
            unread,
            filters,
          })}
        />
      </div>
      <FilterSummary filters={filters} onClear={clearFilters} />
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {data && leads.length === 0 ? (
        <InboxEmpty
          search={searched}
          filtered={tab !== 'all'}
          narrowed={unread || FILTER_KEYS.some((k) => filters[k])}
          onClear={() => setSearch('')}
        />
      ) : (
        <table className="leads">
          <caption className="visually-hidden">Leads, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Phone</th>
              <th scope="col">Channel</th>
              <th scope="col">Status</th>
              <th scope="col">Owner</th>
              <th scope="col">Waiting</th>
              <th scope="col">Created</th>
              <th scope="col">Last activity</th>
              <th scope="col">Speed to lead</th>
              <th scope="col">Next attempt</th>
            </tr>
          </thead>
          <tbody>
            {leads.map((l) => (
              <tr
                key={l.id}
                className={
                  [l.status === 'needs_human' ? 'row-attention' : '', l.unread ? 'unread' : ''].join(' ').trim() ||
                  undefined
                }
              >
                <td>
                  <UnreadMark lead={l} />
                  <Link to={`/admin/${workspace.slug}/leads/${l.id}`} className="lead-name" title={l.name}>
                    {l.name}
                  </Link>
                  {!l.livemode && <span className="badge badge-sandbox">Sandbox</span>}
                </td>
                <td>{l.phone}</td>
                <td>{workspace.channel === 'whatsapp' ? 'WhatsApp' : 'Voice'}</td>
                <td>
                  <StatusBadge status={l.status} />
                </td>
                <td data-label="Owner">
                  <OwnerCell lead={l} />
                </td>
                <td data-label="Waiting">{data && <WaitingCell lead={l} thresholds={data.waiting} now={now} />}</td>
                <td data-label="Created">
                  <time dateTime={l.createdAt}>{since(l.createdAt)}</time>
                </td>
                <td data-label="Last activity">
                  <time dateTime={l.lastActivityAt}>{since(l.lastActivityAt)}</time>
                </td>
                <td data-label="Speed to lead">{duration(l.speedToLeadSeconds)}</td>
                <td>
                  {l.nextAttempt && (
                    <span className="next-attempt">
                      Next attempt: {stepWords(l.nextAttempt.kind)} at{' '}
                      <time dateTime={l.nextAttempt.at}>{attemptTime(l.nextAttempt.at)}</time>
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {cursor && (
        <button type="button" onClick={loadMore}>
          Load more
        </button>
      )}
    </main>
  );
}

/**
 * What an empty list means: the search found nothing (with a way back), a tab or the filters hold
 * none (the tabs' counts are of the filters too), or no lead at all.
 */
function InboxEmpty(p: { search: string; filtered: boolean; narrowed: boolean; onClear: () => void }) {
  const { search, filtered, onClear } = p;
  if (search) {
    return (
      <p className="empty" role="status">
        No leads match &ldquo;{search}&rdquo;{filtered ? ' in this tab' : ''}.{' '}
        <button type="button" onClick={onClear}>
          Clear search
        </button>
      </p>
    );
  }
  const why = [filtered ? 'this status' : '', p.narrowed ? 'these filters' : ''].filter(Boolean).join(' and ');
  return <p className="empty">{why ? `No leads with ${why}.` : 'No leads yet.'}</p>;
}

/** The API refuses shorter searches (3 characters, or 3 digits for a phone number): until then, none. */
function searchLongEnough(search: string): boolean {
  const s = search.trim();
  if (s.includes('@')) return true;
  return /^[\d\s()+.-]+$/.test(s) ? s.replace(/\D/g, '').length >= 3 : [...s].length >= 3;
}

const lastRows = (leads: InboxLead[]) => (leads.length ? { count: leads.length, lastId: leads.at(-1)!.id } : null);

/** The API's largest page. */
const PAGE_MAX = 100;

/**
 * The list's first page or, when more rows are shown, the first rows down to the last one shown
 * (however many leads arrived above it; a page more at most when that lead has left the list).
 */
async function fetchFirst(
  fetchPage: (after?: string, limit?: number) => Promise<Inbox>,
  shown: { count: number; lastId: string } | null,
): Promise<Inbox> {
  if (!shown) return fetchPage();
  const first = await fetchPage(undefined, PAGE_MAX);
  const leads = [...first.leads];
  let next = first.nextCursor;
  while (next && leads.length < shown.count + PAGE_MAX && !leads.some((l) => l.id === shown.lastId)) {
    const d = await fetchPage(next, PAGE_MAX);
    leads.push(...d.leads);
    next = d.nextCursor;
  }
  return { ...first, leads, nextCursor: next };
}
