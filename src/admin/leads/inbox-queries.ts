import type { Queryable } from '../../db/pool.ts';
import { LEAD_STATUSES, type LeadStatus } from '../../leads/lead-state.ts';
import { normalizePhone } from '../../leads/phone.ts';
import { filterCondition, type InboxFilters } from './inbox-filters.ts';

// The leads inbox (docs/DASHBOARD.md, "Inbox"): newest first or by last activity, keyset pages
// (no OFFSET) each read off an index of migrations 011/013/028, a search by phone (any format, or
// the national digits without the country code, which match the end of the stored number:
// normalised, then the unique index), e-mail (exact, its own index) or name (substring, the
// trigram index), at least MIN_SEARCH_LENGTH long, the leads unread by the operator (UNREAD), and
// counts per status of the same search and filters (inboxWhere) that stop at COUNT_CAP so a
// workspace of a million leads costs no more than one of ten thousand.

export const PAGE_SIZE_MAX = 100;
/** Counts stop here: the page shows "10000+". */
export const COUNT_CAP = 10_000;

/**
 * A search shorter than this is refused (400): two letters match a large part of any leads
 * table, and the substring search reads the whole trigram index for them. A phone search counts
 * its digits ("+1 2" is two), an e-mail search is an exact look-up and needs only the `@`.
 */
export const MIN_SEARCH_LENGTH = 3;
export const SEARCH_TOO_SHORT =
  `Search needs at least ${MIN_SEARCH_LENGTH} characters ` + `(${MIN_SEARCH_LENGTH} digits for a phone number).`;

/** Whether `search` (trimmed; empty means no search) is too short to run. */
export function searchTooShort(search: string): boolean {
  const s = search.trim();
  if (s === '' || s.includes('@')) return false;
  if (/^[\d\s()+.-]+$/.test(s)) return s.replace(/\D/g, '').length < MIN_SEARCH_LENGTH;
  return [...s].length < MIN_SEARCH_LENGTH;
}

export const INBOX_SORTS = ['newest', 'activity', 'waiting'] as const;
export type InboxSort = (typeof INBOX_SORTS)[number];
/**
 * The column each order walks (indexes leads_inbox, leads_inbox_activity and leads_waiting,
 * migrations 028, 013 and 040). `waiting` lists only the leads waiting for a person, the longest
 * waiting first.
 */
const SORT_COLUMN: Record<InboxSort, 'created_at' | 'updated_at' | 'needs_human_since'> = {
  newest: 'created_at',
  activity: 'updated_at',
  waiting: 'needs_human_since',
};

export interface InboxQuery {
  workspaceId: string;
  /** Live leads only, or live and sandbox leads (the "Sandbox" switch). */
  sandbox: boolean;
  status?: LeadStatus;
  search?: string;
  /** Newest first (the default) or by last activity, most recent first. */
  sort?: InboxSort;
  /** From the previous page of the same sort. */
  cursor?: string;
  limit: number;
  defaultCountry?: string;
  /** The operator asking: `unread` is theirs (per-operator read markers, migration 040). */
  operatorId?: string;
  /** Period, stage reached, handled by (inbox-filters.ts). */
  filters?: InboxFilters;
  /** Only the leads unread by the operator (UNREAD). */
  unread?: boolean;
}

/** Who has the lead: the agent, the operator who took it over, or nobody (waiting for a person). */
export type InboxOwner = { kind: 'ai' } | { kind: 'nobody' } | { kind: 'operator'; id: string; name: string };

export interface InboxRow {
  id: string;
  name: string;
  phone: string;
  email: string | null;
  status: LeadStatus;
  livemode: boolean;
  createdAt: string;
  lastActivityAt: string;
  /** Seconds from the lead's creation to the first message or call; null until then. */
  speedToLeadSeconds: number | null;
  owner: InboxOwner;
  /** Since when the lead waits for a person (needs_human); null otherwise. */
  waitingSince: string | null;
  /** The lead wrote after this operator last opened it. */
  unread: boolean;
}

function ownerOf(r: { status: LeadStatus; owner_id: string | null; owner_name: string | null }): InboxOwner {
  if (r.owner_id) return { kind: 'operator', id: r.owner_id, name: r.owner_name ?? '' };
  return r.status === 'needs_human' ? { kind: 'nobody' } : { kind: 'ai' };
}

// `at` is the sort column to the microsecond, as PostgreSQL stores it: a JavaScript Date keeps
// milliseconds only, and a cursor cut to them would skip the leads of the page's last
// millisecond (a batch of leads inserted by one statement shares one `created_at`).
const encodeCursor = (at: string, id: string) => Buffer.from(`${at}|${id}`).toString('base64url');

/** The cursor's position, or null when it is not one of ours. */
export function decodeCursor(cursor: string): { at: string; id: string } | null {
  const [at, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  if (!at || !id || Number.isNaN(Date.parse(at)) || !/^[0-9a-f-]{36}$/.test(id)) return null;
  return { at, id };
}

/**
 * The lead wrote after the operator (`operator`, a parameter) last opened it: its newest inbound
 * message is later than their read marker (lead_reads, migration 040). The list's `unread` and
 * the `unread` filter and its count are this one condition.
 */
const UNREAD = (operator: string) =>
  `(l.last_inbound_at IS NOT NULL AND l.last_inbound_at > COALESCE((SELECT r.read_through FROM lead_reads r
     WHERE r.lead_id = l.id AND r.operator_id = ${operator}::uuid), '-infinity'))`;

/** The search's SQL condition on `l` and its one parameter (`$SEARCH`, possibly used more than once). */
function searchCondition(
  search: string | undefined,
  defaultCountry: string | undefined,
): { sql: string; value: string | string[] | null } {
  const s = search?.trim();
  if (!s) return { sql: '$SEARCH::text IS NULL', value: null };
  // `email IS NOT NULL` spells out the partial index's condition for the planner.
  if (s.includes('@')) return { sql: `l.email IS NOT NULL AND lower(l.email) = $SEARCH`, value: s.toLowerCase() };
  const digits = s.replace(/\D/g, '');
  // Not a possible number for the library (a stored number from before migration 007, say):
  // its digits with a "+" are still worth one exact look-up before a name search.
  const phone = /\d{5,}/.test(s.replace(/[\s().-]/g, ''))
    ? (normalizePhone(s, defaultCountry) ?? (digits.length >= 7 ? `+${digits}` : null))
    : null;
  // Typed without its country code ("555 010 0001"), a number is the tail of the stored E.164
  // one: its digits also match the end of phone_normalized (a scan of the workspace's leads,
  // only for searches of 5 digits or more). A number typed with "+" matches exactly.
  if (phone && s.startsWith('+')) return { sql: `l.phone_normalized = $SEARCH[1]`, value: [phone] };
  const tail = `right(l.phone_normalized, length($SEARCH[2])) = $SEARCH[2]`;
  if (phone) return { sql: `(l.phone_normalized = $SEARCH[1] OR ${tail})`, value: [phone, digits] };
  return { sql: `l.name ILIKE $SEARCH`, value: `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%` };
}

/**
 * What narrows the inbox besides the status and the page: the list and its counts share it. The
 * sort narrows too: `waiting` lists only the leads waiting for a person, so under it the tabs
 * count only those.
 */
export type InboxNarrowing = Pick<
  InboxQuery,
  'search' | 'defaultCountry' | 'filters' | 'sort' | 'unread' | 'operatorId'
>;

/**
 * The workspace's leads (live, or live and sandbox) that the search, filters and sort keep: one
 * condition on `l` for the list and the counts, so a tab's count is the leads its list pages
 * through. Its parameters are appended to `params`, numbered after those already there.
 */
function inboxWhere(workspaceId: string, sandbox: boolean, n: InboxNarrowing, params: unknown[]): string {
  const param = (v: unknown) => `$${params.push(v)}`;
  const workspace = param(workspaceId);
  const modes = param(sandbox ? [true, false] : [true]);
  const search = searchCondition(n.search, n.defaultCountry);
  const s = param(search.value);
  // Replaced by functions: `$` in a replacement string has meanings of its own (`$&`, `$$`).
  const searchSql = search.sql.replaceAll('$SEARCH[', () => `(${s}::text[])[`).replaceAll('$SEARCH', () => s);
  const filter = filterCondition(n.filters, params.length + 1);
  params.push(...filter.values);
  const unread = n.unread ? ` AND ${UNREAD(param(n.operatorId ?? null))}` : '';
  return `l.workspace_id = ${workspace} AND l.livemode = ANY(${modes}::boolean[])
        AND ${searchSql} AND ${filter.sql}${n.sort === 'waiting' ? ` AND l.status = 'needs_human'` : ''}${unread}`;
}

export async function listInbox(
  db: Queryable,
  q: InboxQuery,
): Promise<{ leads: InboxRow[]; nextCursor: string | null }> {
  const after = q.cursor ? decodeCursor(q.cursor) : null;
  const col = SORT_COLUMN[q.sort ?? 'newest'];
  const waiting = q.sort === 'waiting';
  const params: unknown[] = [];
  const param = (v: unknown) => `$${params.push(v)}`;
  const where = inboxWhere(q.workspaceId, q.sandbox, q, params);
  const status = param(q.status ?? null);
  const [at, id] = [param(after?.at ?? null), param(after?.id ?? null)];
  const operator = param(q.operatorId ?? null);
  const limit = param(q.limit + 1);
  const { rows } = await db.query(
    `SELECT l.id, l.name, l.phone, l.email, l.status, l.livemode, l.created_at, l.updated_at,
            to_char(l.${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at,
            l.owner_operator_id AS owner_id, o.name AS owner_name, l.needs_human_since,
            ${UNREAD(operator)} AS unread,
            -- The first contact as the Analytics page counts it (lead_funnel, migrations 017 and 042).
            (SELECT extract(epoch FROM f.contacted_at - l.created_at) FROM lead_funnel f
              WHERE f.lead_id = l.id) AS speed
       FROM leads l LEFT JOIN operators o ON o.id = l.owner_operator_id
      WHERE ${where}
        AND (${status}::text IS NULL OR l.status = ${status})
        AND (${at}::timestamptz IS NULL OR (l.${col}, l.id) ${waiting ? '>' : '<'} (${at}, ${id}::uuid))
      ORDER BY l.${col} ${waiting ? 'ASC' : 'DESC'}, l.id ${waiting ? 'ASC' : 'DESC'}
      LIMIT ${limit}`,
    params,
  );
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return {
    leads: page.map((r) => ({
      id: r.id,
      name: r.name,
      phone: r.phone,
      email: r.email,
      status: r.status,
      livemode: r.livemode,
      createdAt: new Date(r.created_at).toISOString(),
      lastActivityAt: new Date(r.updated_at).toISOString(),
      speedToLeadSeconds: r.speed === null ? null : Math.max(0, Math.round(Number(r.speed) * 10) / 10),
      owner: ownerOf(r),
      waitingSince:
        r.status === 'needs_human' && r.needs_human_since ? new Date(r.needs_human_since).toISOString() : null,
      unread: r.unread === true,
    })),
    nextCursor: rows.length > q.limit && last ? encodeCursor(last.cursor_at, last.id) : null,
  };
}

/** Whether the workspace has a live lead (the inbox shows sandbox leads by default until it does). */
export async function hasLiveLeads(db: Queryable, workspaceId: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT EXISTS (SELECT 1 FROM leads WHERE workspace_id = $1 AND livemode) AS live`, [
    workspaceId,
  ]);
  return rows[0].live === true;
}

export type StatusCounts = Record<LeadStatus | 'all', number>;

/**
 * Leads per status and in all, of the same search, filters and sort as the list (the status and
 * page aside), each at most COUNT_CAP: without a search or filter, index-only scans of
 * leads_inbox_status; with one, each stops at COUNT_CAP matches. Every lead has one status, so
 * "all" is their sum (at most COUNT_CAP too): a rare filter's leads are looked for once, not twice.
 */
export async function countInbox(
  db: Queryable,
  workspaceId: string,
  sandbox: boolean,
  narrowing: InboxNarrowing = {},
): Promise<StatusCounts> {
  const params: unknown[] = [];
  const where = inboxWhere(workspaceId, sandbox, narrowing, params);
  const capped = (status: LeadStatus) =>
    `(SELECT count(*)::int FROM (SELECT 1 FROM leads l WHERE ${where}
        AND l.status = $${params.push(status)} LIMIT ${COUNT_CAP}) c)`;
  const { rows } = await db.query(`SELECT ${LEAD_STATUSES.map((s) => `${capped(s)} AS ${s}`).join(', ')}`, params);
  const counts = rows[0] as Record<LeadStatus, number>;
  const sum = LEAD_STATUSES.reduce((n, s) => n + counts[s], 0);
  return { ...counts, all: Math.min(sum, COUNT_CAP) };
}
