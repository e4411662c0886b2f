import type { ReactNode } from 'react';
import type { LeadPage, Status } from './api.ts';
import { Link } from './link.tsx';

// The inbox's view in the page's address (/admin/<slug>/leads?status=…&q=…&from=…&reached=…):
// the tab, the search, the Sandbox switch, the sort, the source, the Unread filter and the filters
// the Analytics page links each figure with. A reload, a bookmark or a link shared with a teammate
// opens the same view, and back/forward step through the views. The CSV export sends the same query to the API.

export interface UrlFilters {
  from?: string;
  to?: string;
  reached?: 'contacted' | 'conversation';
  handledBy?: 'ai' | 'person';
  source?: LeadSource;
}

/** How a lead came in (the API's `source` filter, leads.source), with the Source select's words. */
export const SOURCE_LABELS = {
  api: 'API',
  form: 'Hosted form',
  embed: 'Embedded form',
  publishable: 'Publishable key',
  meta: 'Meta Lead Ads',
  google: 'Google lead form',
  webhook: 'Webhook',
} as const satisfies Record<LeadPage['lead']['source']['kind'], string>;
export type LeadSource = keyof typeof SOURCE_LABELS;
const isSource = (v: string | null): v is LeadSource => v !== null && Object.hasOwn(SOURCE_LABELS, v);

export type Sort = 'newest' | 'activity' | 'waiting';

export interface InboxView {
  tab: Status | 'all';
  /** As typed (the API gets it trimmed, once long enough). */
  search: string;
  /** null: the API's default (sandbox leads shown while the workspace has no live lead). */
  sandbox: boolean | null;
  sort: Sort;
  /** Only the leads that wrote since the operator last opened them (`unread=true`). */
  unread: boolean;
  filters: UrlFilters;
}

const STATUSES: readonly Status[] = ['new', 'in_conversation', 'booked', 'unqualified', 'needs_human'];
const DAY = /^\d{4}-\d{2}-\d{2}$/;
export const FILTER_KEYS = ['from', 'to', 'reached', 'handledBy', 'source'] as const;

/** The view an address's query names; anything unknown is left out (the default shows). */
export function readInboxView(p: URLSearchParams): InboxView {
  const filters: UrlFilters = {};
  const from = p.get('from');
  const to = p.get('to');
  const reached = p.get('reached');
  const handledBy = p.get('handledBy');
  const source = p.get('source');
  const status = p.get('status');
  const sort = p.get('sort');
  const sandbox = p.get('sandbox');
  if (from && DAY.test(from)) filters.from = from;
  if (to && DAY.test(to)) filters.to = to;
  if (reached === 'contacted' || reached === 'conversation') filters.reached = reached;
  if (handledBy === 'ai' || handledBy === 'person') filters.handledBy = handledBy;
  if (isSource(source)) filters.source = source;
  return {
    tab: status && (STATUSES as string[]).includes(status) ? (status as Status) : 'all',
    search: p.get('q') ?? '',
    sandbox: sandbox === 'true' ? true : sandbox === 'false' ? false : null,
    sort: sort === 'activity' || sort === 'waiting' ? sort : 'newest',
    unread: p.get('unread') === 'true',
    filters,
  };
}

/** Adds the filters to an API query. */
export function addFilters(p: URLSearchParams, f: UrlFilters): void {
  for (const k of FILTER_KEYS) if (f[k]) p.set(k, f[k]!);
}

/**
 * The inbox's address for these filters (the Analytics page's links). A `sandbox` given is always
 * written, `false` too: the inbox's default without one (sandbox leads while the workspace has no
 * live lead) is not the "live leads only" a figure counted.
 */
export function inboxHref(slug: string, f: UrlFilters & { status?: Status; sandbox?: boolean }): string {
  const p = new URLSearchParams();
  if (f.status) p.set('status', f.status);
  addFilters(p, f);
  if (f.sandbox !== undefined) p.set('sandbox', String(f.sandbox));
  const q = p.toString();
  return `/admin/${slug}/leads${q ? `?${q}` : ''}`;
}

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
  if (filters.source) parts.push(`from ${SOURCE_LABELS[filters.source]}`);
  if (parts.length === 0) return null;
  return (
    <p className="filter-summary" role="status">
      Showing leads {parts.join(' · ')}.{' '}
      <button type="button" className="link" onClick={onClear}>
        Show all leads
      </button>
    </p>
  );
}

/**
 * The inbox's API query for a view (without page cursor): what the list and the CSV export send.
 * `sandbox` undefined leaves the API its default.
 */
export function inboxParams(v: {
  tab: Status | 'all';
  search: string;
  sandbox: boolean | null;
  sort: string;
  unread: boolean;
  filters: UrlFilters;
}): URLSearchParams {
  const p = new URLSearchParams();
  if (v.tab !== 'all') p.set('status', v.tab);
  if (v.search) p.set('q', v.search);
  if (v.sandbox !== null) p.set('sandbox', String(v.sandbox));
  if (v.sort !== 'newest') p.set('sort', v.sort);
  if (v.unread) p.set('unread', 'true');
  addFilters(p, v.filters);
  return p;
}

/** The link to the CSV file of the inbox's current filter (the session cookie authenticates it). */
export function CsvExportLink({ slug, params }: { slug: string; params: URLSearchParams }) {
  const q = params.toString();
  const href = `/api/admin/workspaces/${slug}/leads.csv${q ? `?${q}` : ''}`;
  // A file from the API, not a page of the app: a plain anchor.
  return (
    <a className="button" href={href} download>
      Export CSV
    </a>
  );
}

/** A link to the inbox filtered to some leads, opened in the page (no reload). */
export function LeadsLink({
  slug,
  filter,
  children,
  label,
}: {
  slug: string;
  filter: UrlFilters & { status?: Status; sandbox?: boolean };
  children: ReactNode;
  /** The accessible name when the visible text alone is ambiguous (a bare count). */
  label?: string;
}) {
  return (
    <Link to={inboxHref(slug, filter)} aria-label={label}>
      {children}
    </Link>
  );
}
