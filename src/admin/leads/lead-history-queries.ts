import type { Queryable } from '../../db/pool.ts';
import type { LeadMessage } from '../../leads/lead-details.ts';

// A lead's history in pages, newest page first (docs/DASHBOARD.md, "Lead page"): the WhatsApp
// thread, the timeline and the provider traffic. Keyset pages by (time, id): a page costs the
// same however long the conversation is, and rows added meanwhile never shift the older pages.

export const HISTORY_PAGE = 50;
export const HISTORY_PAGE_MAX = 200;

// The time to the microsecond, as PostgreSQL stores it: a JavaScript Date keeps milliseconds
// only, and a cursor cut to them would skip the rows of the page's last millisecond (the parts of
// a long answer are stored by one statement and share one `created_at`).
const AT = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`;
const CURSOR = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z\|\d{1,18}$/;

const encodeCursor = (at: string, id: number) => Buffer.from(`${at}|${id}`).toString('base64url');

/** The cursor's position, or null when it is not one of ours. */
export function decodeHistoryCursor(cursor: string): { at: string; id: number } | null {
  const text = Buffer.from(cursor, 'base64url').toString();
  if (!CURSOR.test(text)) return null;
  const [at, id] = text.split('|') as [string, string];
  return Number.isNaN(Date.parse(at)) ? null : { at, id: Number(id) };
}

export interface HistoryQuery {
  leadId: string;
  /** `olderCursor` of the page before (newer): rows older than its last one. */
  before?: string | undefined;
  limit: number;
}

export interface Page<T> {
  /** The page's rows, newest first. */
  rows: T[];
  /** The next (older) page, or null when this one reaches the oldest row. */
  olderCursor: string | null;
}

const iso = (v: Date | string) => new Date(v).toISOString();

async function page(
  db: Queryable,
  table: string,
  timeCol: string,
  cols: string,
  q: HistoryQuery,
  workspaceId: string | null = null,
) {
  const before = q.before ? decodeHistoryCursor(q.before) : null;
  const { rows } = await db.query(
    `SELECT ${cols}, ${AT(timeCol)} FROM ${table}
      WHERE lead_id = $1 ${workspaceId === null ? '' : 'AND workspace_id = $5'}
        AND ($2::timestamptz IS NULL OR (${timeCol}, id) < ($2, $3::bigint))
      ORDER BY ${timeCol} DESC, id DESC
      LIMIT $4`,
    [q.leadId, before?.at ?? null, before?.id ?? null, q.limit + 1, ...(workspaceId === null ? [] : [workspaceId])],
  );
  const last = rows[q.limit - 1];
  const olderCursor = rows.length > q.limit && last ? encodeCursor(last.cursor_at, last.id) : null;
  return { rows: rows.slice(0, q.limit), olderCursor };
}

/** The lead page's message, without the provider (the older pages' rows do not select it). */
export type MessageRow = Omit<LeadMessage, 'provider'>;

export async function messagePage(db: Queryable, q: HistoryQuery): Promise<Page<MessageRow>> {
  const p = await page(
    db,
    'whatsapp_messages',
    'created_at',
    'id, direction, kind, body, status, error_code, error_message, created_at, status_at',
    q,
  );
  return {
    olderCursor: p.olderCursor,
    rows: p.rows.map((m) => ({
      id: m.id,
      direction: m.direction,
      kind: m.kind,
      body: m.body,
      status: m.status,
      errorCode: m.error_code,
      errorMessage: m.error_message,
      createdAt: iso(m.created_at),
      statusAt: iso(m.status_at),
    })),
  };
}

export interface TimelineRow {
  id: number;
  type: string;
  data: Record<string, unknown>;
  at: string;
}

export async function timelinePage(db: Queryable, q: HistoryQuery): Promise<Page<TimelineRow>> {
  const p = await page(db, 'lead_events', 'at', 'id, type, data, at', q);
  return {
    olderCursor: p.olderCursor,
    rows: p.rows.map((e) => ({ id: e.id, type: e.type, data: e.data, at: iso(e.at) })),
  };
}

export interface TrafficRow {
  id: number;
  provider: string;
  direction: 'in' | 'out';
  kind: string;
  httpStatus: number | null;
  outcome: string | null;
  createdAt: string;
}

/** Provider traffic without its payloads (the Logs page shows those, filtered by lead). */
export async function trafficPage(db: Queryable, workspaceId: string, q: HistoryQuery): Promise<Page<TrafficRow>> {
  const cols = 'id, provider, direction, kind, http_status, outcome, created_at';
  const p = await page(db, 'integration_events', 'created_at', cols, q, workspaceId);
  return {
    olderCursor: p.olderCursor,
    rows: p.rows.map((e) => ({
      id: e.id,
      provider: e.provider,
      direction: e.direction,
      kind: e.kind,
      httpStatus: e.http_status,
      outcome: e.outcome,
      createdAt: iso(e.created_at),
    })),
  };
}

/** Whether the lead is one of the workspace's. */
export async function leadInWorkspace(db: Queryable, workspaceId: string, leadId: string): Promise<boolean> {
  const { rowCount } = await db.query(`SELECT 1 FROM leads WHERE id = $1 AND workspace_id = $2`, [leadId, workspaceId]);
  return rowCount === 1;
}
