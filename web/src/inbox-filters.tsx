import { useEffect, useState, type ReactNode } from 'react';
import type { Status } from './api.ts';
import { navigate } from './nav.ts';

// The inbox's filters in the page's address (/admin/<slug>/leads?from=…&reached=…): the
// Analytics page links each figure to the leads behind it this way, and the address can be
// bookmarked or shared with a teammate. The CSV export sends the same filters.

export interface UrlFilters {
  from?: string;
  to?: string;
  reached?: 'contacted' | 'conversation';
  handledBy?: 'ai' | 'person';
}

const STATUSES: readonly Status[] = ['new', 'in_conversation', 'booked', 'unqualified', 'needs_human'];
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The filters of an address's query; anything unknown is left out. */
export function readUrlFilters(search: string): UrlFilters & { status?: Status; sandbox?: boolean } {
  const p = new URLSearchParams(search);
  const out: UrlFilters & { status?: Status; sandbox?: boolean } = {};
  const from = p.get('from');
  const to = p.get('to');
  const reached = p.get('reached');
  const handledBy = p.get('handledBy');
  const status = p.get('status');
  if (from && DAY.test(from)) out.from = from;
  if (to && DAY.test(to)) out.to = to;
  if (reached === 'contacted' || reached === 'conversation') out.reached = reached;
  if (handledBy === 'ai' || handledBy === 'person') out.handledBy = handledBy;
  if (status && (STATUSES as string[]).includes(status)) out.status = status as Status;
  if (p.get('sandbox') === 'true') out.sandbox = true;
  return out;
}

/** Adds the filters to an API query. */
export function addFilters(p: URLSearchParams, f: UrlFilters): void {
  for (const k of ['from', 'to', 'reached', 'handledBy'] as const) if (f[k]) p.set(k, f[k]!);
}

/** The inbox's address for these filters (the Analytics page's links). */
export function inboxHref(slug: string, f: UrlFilters & { status?: Status; sandbox?: boolean }): string {
  const p = new URLSearchParams();
  if (f.status) p.set('status', f.status);
  addFilters(p, f);
  if (f.sandbox) p.set('sandbox', 'true');
  const q = p.toString();
  return `/admin/${slug}/leads${q ? `?${q}` : ''}`;
}

/** The address's filters, following back and forward; `clear` drops them from the address too. */
export function useUrlFilters(): { filters: UrlFilters; clear: () => void } {
  const [filters, setFilters] = useState<UrlFilters>(() => strip(readUrlFilters(location.search)));
  useEffect(() => {
    const on = () => setFilters(strip(readUrlFilters(location.search)));
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  const clear = () => {
    history.replaceState(null, '', location.pathname);
    setFilters({});
  };
  return { filters, clear };
}

const strip = ({ status: _s, sandbox: _b, ...f }: ReturnType<typeof readUrlFilters>): UrlFilters => f;

const REACHED = { contacted: 'contacted', conversation: 'had a conversation' } as const;
const HANDLED = { ai: 'handled by the AI alone', person: 'a person stepped in' } as const;

/** "Created 2026-05-01 to 2026-05-07 · had a conversation · a person stepped in", with a way back to all leads. */
export function FilterSummary({ filters, onClear }: { filters: UrlFilters; onClear: () => void }) {
  const parts: string[] = [];
  if (filters.from && filters.to) {
    parts.push(filters.from === filters.to ? `created on ${filters.from}` : `created ${filters.from} to ${filters.to}`);
  } else if (filters.from) parts.push(`created from ${filters.from}`);
  else if (filters.to) parts.push(`created until ${filters.to}`);
  if (filters.reached) parts.push(REACHED[filters.reached]);
  if (filters.handledBy) parts.push(HANDLED[filters.handledBy]);
  if (parts.length === 0) return null;
  return (
    <p className="filter-summary" role="status">
      Showing leads {parts.join(' · ')}.{' '}
      <button type="button" className="link" onClick={onClear}>Show all leads</button>
    </p>
  );
}

/** The inbox's API query for its current view (without page cursor): what the CSV export sends. */
export function inboxParams(
  v: { tab: Status | 'all'; search: string; sandbox: boolean; sort: string; filters: UrlFilters },
): URLSearchParams {
  const p = new URLSearchParams();
  if (v.tab !== 'all') p.set('status', v.tab);
  if (v.search) p.set('q', v.search);
  p.set('sandbox', String(v.sandbox));
  if (v.sort !== 'newest') p.set('sort', v.sort);
  addFilters(p, v.filters);
  return p;
}

/** The link to the CSV file of the inbox's current filter (the session cookie authenticates it). */
export function CsvExportLink({ slug, params }: { slug: string; params: URLSearchParams }) {
  const q = params.toString();
  const href = `/api/admin/workspaces/${slug}/leads.csv${q ? `?${q}` : ''}`;
  return <a className="button" href={href} download>Export CSV</a>;
}

/** A link to the inbox filtered to some leads, opened in the page (no reload). */
export function LeadsLink({ slug, filter, children, label }: {
  slug: string;
  filter: UrlFilters & { status?: Status; sandbox?: boolean };
  children: ReactNode;
  /** The accessible name when the visible text alone is ambiguous (a bare count). */
  label?: string;
}) {
  const href = inboxHref(slug, filter);
  return <a href={href} aria-label={label} onClick={(e) => { e.preventDefault(); navigate(href); }}>{children}</a>;
}
