import type { Queryable } from '../../db/pool.ts';

// The Logs page's reads (docs/DASHBOARD.md, "Logs, dead letters and the audit log"): a workspace's
// integration log and audit log, newest first, in keyset pages on the id (never OFFSET).

/** What the page shows of a payload: the stored JSON text (already redacted when written), cut here. */
export const PAYLOAD_PREVIEW_CHARS = 4096;

export interface IntegrationLogFilter {
  provider?: string | undefined;
  errorsOnly?: boolean | undefined;
  leadId?: string | undefined;
  /** Entries older than this id (the previous page's `nextCursor`). */
  before?: string | undefined;
  limit: number;
}

export interface IntegrationLogRow {
  id: string;
  at: Date;
  provider: string;
  direction: 'in' | 'out';
  operation: string;
  httpStatus: number | null;
  latencyMs: number | null;
  outcome: string | null;
  error: string | null;
  failed: boolean;
  leadId: string | null;
  /** Whether the lead still exists in the workspace (only then does the page link to it). */
  leadExists: boolean;
  payload: string;
  payloadChars: number;
}

// The same text as the partial index integration_events_errors (migration 016), so the planner
// can use it: a failure is a row with an error text or an HTTP status of 400 or more.
const FAILED = '(e.error IS NOT NULL OR e.http_status >= 400)';

export async function integrationLogPage(
  db: Queryable,
  workspaceId: string,
  f: IntegrationLogFilter,
): Promise<{ entries: IntegrationLogRow[]; nextCursor: string | null }> {
  const values: unknown[] = [workspaceId];
  const where = ['e.workspace_id = $1'];
  // Only the filters asked for are in the statement: each shape gets its own plan (and index).
  if (f.before) where.push(`e.id < $${values.push(f.before)}`);
  if (f.provider) where.push(`e.provider = $${values.push(f.provider)}`);
  if (f.leadId) where.push(`e.lead_id = $${values.push(f.leadId)}`);
  if (f.errorsOnly) where.push(FAILED);
  const { rows } = await db.query(
    `SELECT e.id::text AS id, e.created_at, e.provider, e.direction,
            e.kind, e.http_status, e.latency_ms, e.outcome, e.error,
            ${FAILED} AS failed, e.lead_id,
            EXISTS (SELECT 1 FROM leads l WHERE l.id = e.lead_id AND l.workspace_id = e.workspace_id) AS lead_exists,
            left(e.payload::text, ${PAYLOAD_PREVIEW_CHARS}) AS payload, length(e.payload::text) AS payload_chars
       FROM integration_events e
      WHERE ${where.join(' AND ')}
      ORDER BY e.id DESC
      LIMIT $${values.push(f.limit + 1)}`,
    values,
  );
  const page = rows.slice(0, f.limit);
  return {
    entries: page.map((r) => ({
      id: r.id,
      at: r.created_at,
      provider: r.provider,
      direction: r.direction,
      operation: r.kind,
      httpStatus: r.http_status,
      latencyMs: r.latency_ms,
      outcome: r.outcome,
      error: r.error,
      failed: r.failed === true,
      leadId: r.lead_id,
      leadExists: r.lead_exists,
      payload: r.payload,
      payloadChars: r.payload_chars,
    })),
    nextCursor: rows.length > f.limit ? page[page.length - 1]!.id : null,
  };
}

export interface AuditRow {
  id: string;
  at: Date;
  type: string;
  actor: string;
  /** The operator named by `operator:<id>` when the account still exists; null for the CLI. */
  operator: { name: string; email: string } | null;
  subjectId: string | null;
  /** Whether the subject is a lead of the workspace that still exists (the page links to it). */
  subjectIsLead: boolean;
}

export async function auditLogPage(
  db: Queryable,
  workspaceId: string,
  f: { before?: string | undefined; limit: number },
): Promise<{ events: AuditRow[]; nextCursor: string | null }> {
  const { rows } = await db.query(
    `SELECT a.id::text AS id, a.at, a.type, a.actor, a.subject_id, o.name, o.email, l.id IS NOT NULL AS subject_is_lead
       FROM audit_events a
       LEFT JOIN operators o ON o.id = CASE WHEN a.actor ~ '^operator:[0-9a-f-]{36}$' THEN substr(a.actor, 10)::uuid END
       LEFT JOIN leads l ON l.id = a.subject_id AND l.workspace_id = a.workspace_id
      WHERE a.workspace_id = $1 AND ($2::bigint IS NULL OR a.id < $2)
      ORDER BY a.id DESC
      LIMIT $3`,
    [workspaceId, f.before ?? null, f.limit + 1],
  );
  const page = rows.slice(0, f.limit);
  return {
    events: page.map((r) => ({
      id: r.id,
      at: r.at,
      type: r.type,
      actor: r.actor,
      operator: r.name === null ? null : { name: r.name, email: r.email },
      subjectId: r.subject_id,
      subjectIsLead: r.subject_is_lead,
    })),
    nextCursor: rows.length > f.limit ? page[page.length - 1]!.id : null,
  };
}

/** Of these lead ids, the ones that are leads of the workspace, with their names. */
export async function leadsOfWorkspace(
  db: Queryable,
  workspaceId: string,
  leadIds: string[],
): Promise<Map<string, string>> {
  if (leadIds.length === 0) return new Map();
  const { rows } = await db.query(`SELECT id, name FROM leads WHERE workspace_id = $1 AND id = ANY($2::uuid[])`, [
    workspaceId,
    leadIds,
  ]);
  return new Map(rows.map((r) => [r.id as string, r.name as string]));
}
