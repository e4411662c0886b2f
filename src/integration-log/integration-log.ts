import type { Queryable } from '../db/pool.ts';
import type { Logger } from '../shared/logger.ts';
import { redactSecrets } from './redact.ts';

// The integration log: every request we send to a provider and every message a provider sends
// us, per workspace, for the operators' Logs page (docs/VOICE.md, "Integration log"). Generic on
// purpose: Vapi, Cal.com, the WhatsApp providers and the LLM client all write the same rows.
// Retention is bounded by age and by a per-workspace row cap (pruneIntegrationEvents).

export type IntegrationDirection = 'in' | 'out';

export interface IntegrationEventInput {
  /** `vapi`, `calcom`, `twilio`, `meta`, `openai`, … */
  provider: string;
  /** Null when no workspace could be matched (the row is then only pruned by age). */
  workspaceId: string | null;
  leadId?: string | null;
  /** `out`: we called the provider; `in`: the provider called us. */
  direction: IntegrationDirection;
  /** What it was: `POST /call`, `GET /assistant/{id}`, `status-update`, `tool-calls`, … (at most 100 characters). */
  kind: string;
  /** The provider's HTTP status (out) or ours (in); null when there was no answer. */
  httpStatus?: number | null;
  /** A short word on what came of it: `applied`, `duplicate`, `unknown-call`, `rejected`, `error`, … */
  outcome?: string | null;
  /** How long the exchange took, in milliseconds (ours to answer, for `in`); null when not measured. */
  latencyMs?: number | null;
  /** What went wrong, in a line, when it failed (at most 500 characters; secrets masked like the payload). */
  error?: string | null;
  /** Conventionally `{ request, response }`. Secrets are redacted before it is stored. */
  payload: unknown;
  /** Secret values to mask wherever they appear (the workspace's API key, webhook secret). */
  secrets?: readonly string[];
  /** Default: the database's now(). */
  at?: Date;
}

export interface IntegrationEvent {
  id: number;
  workspaceId: string | null;
  leadId: string | null;
  provider: string;
  direction: IntegrationDirection;
  kind: string;
  httpStatus: number | null;
  outcome: string | null;
  latencyMs: number | null;
  error: string | null;
  payload: unknown;
  createdAt: Date;
}

/** Payloads above this many characters of JSON are stored cut, marked `truncated`. */
export const MAX_PAYLOAD_CHARS = 256 * 1024;

/** Stores one entry. Throws on database errors; see recordIntegrationEventSafely. */
export async function recordIntegrationEvent(db: Queryable, entry: IntegrationEventInput): Promise<void> {
  await db.query({
    name: 'record-integration-event',
    text: `INSERT INTO integration_events (workspace_id, lead_id, provider,
           direction, kind, http_status, outcome, payload, created_at, latency_ms, error)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, COALESCE($9, now()), $10, $11)`,
    values: storedColumns(entry),
  });
}

/**
 * An entry's stored column values, in the order of the INSERT above: cut to the columns' sizes,
 * the payload and the error text with secrets masked.
 */
export function storedColumns(entry: IntegrationEventInput): unknown[] {
  return [
    entry.workspaceId,
    entry.leadId ?? null,
    entry.provider.slice(0, 40),
    entry.direction,
    entry.kind.slice(0, 100),
    entry.httpStatus ?? null,
    entry.outcome?.slice(0, 60) ?? null,
    storedPayload(entry.payload, entry.secrets),
    entry.at ?? null,
    entry.latencyMs === null || entry.latencyMs === undefined ? null : Math.max(0, Math.round(entry.latencyMs)),
    storedError(entry.error, entry.secrets),
  ];
}

/**
 * The same, for callers whose own work must not fail because the log could not be written (a
 * provider exchange already happened): failures become a warning line.
 */
export async function recordIntegrationEventSafely(
  db: Queryable,
  log: Logger,
  entry: IntegrationEventInput,
): Promise<void> {
  try {
    await recordIntegrationEvent(db, entry);
  } catch (err) {
    log.warn(
      { err, provider: entry.provider, kind: entry.kind, workspaceId: entry.workspaceId },
      'integration log entry not written',
    );
  }
}

function storedError(error: string | null | undefined, secrets: readonly string[] = []): string | null {
  if (error === null || error === undefined || error === '') return null;
  return (redactSecrets(error, secrets) as string).slice(0, 500);
}

function storedPayload(payload: unknown, secrets: readonly string[] = []): string {
  const text = JSON.stringify(redactSecrets(payload ?? null, secrets)) ?? 'null';
  if (text.length <= MAX_PAYLOAD_CHARS) return text;
  return JSON.stringify({ truncated: true, chars: text.length, head: text.slice(0, MAX_PAYLOAD_CHARS) });
}

/** A workspace's entries, newest first; `beforeId` pages back. */
export async function listIntegrationEvents(
  db: Queryable,
  workspaceId: string,
  opts: { limit?: number; beforeId?: number; leadId?: string; provider?: string } = {},
): Promise<IntegrationEvent[]> {
  const { rows } = await db.query(
    `SELECT * FROM integration_events
      WHERE workspace_id = $1 AND ($2::bigint IS NULL OR id < $2)
      AND ($3::uuid IS NULL OR lead_id = $3) AND ($4::text IS NULL OR provider = $4)
      ORDER BY id DESC LIMIT $5`,
    [
      workspaceId,
      opts.beforeId ?? null,
      opts.leadId ?? null,
      opts.provider ?? null,
      Math.min(Math.max(opts.limit ?? 50, 1), 500),
    ],
  );
  return rows.map((r) => ({
    id: r.id,
    workspaceId: r.workspace_id,
    leadId: r.lead_id,
    provider: r.provider,
    direction: r.direction,
    kind: r.kind,
    httpStatus: r.http_status,
    outcome: r.outcome,
    latencyMs: r.latency_ms,
    error: r.error,
    payload: r.payload,
    createdAt: r.created_at,
  }));
}

export interface RetentionPolicy {
  /** Entries older than this many days go. */
  maxAgeDays: number;
  /** Beyond this many entries of one workspace, its oldest go. */
  maxPerWorkspace: number;
}

const BATCH = 5_000;

/**
 * Deletes what the policy no longer keeps, in batches so no statement holds locks for long.
 * Returns how many entries were deleted.
 */
export async function pruneIntegrationEvents(db: Queryable, policy: RetentionPolicy): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { rowCount } = await db.query(
      `DELETE FROM integration_events WHERE id IN (
         SELECT id FROM integration_events WHERE created_at < now() - make_interval(days => $1) LIMIT $2)`,
      [policy.maxAgeDays, BATCH],
    );
    deleted += rowCount ?? 0;
    if ((rowCount ?? 0) < BATCH) break;
  }
  // Per workspace: the id of its newest entry past the cap, then everything of it at or below.
  const { rowCount } = await db.query(
    `DELETE FROM integration_events e USING (
       SELECT w.id AS workspace_id,
              (SELECT x.id FROM integration_events x
              WHERE x.workspace_id = w.id ORDER BY x.id DESC OFFSET $1 LIMIT 1) AS cutoff
         FROM workspaces w
     ) c
     WHERE c.cutoff IS NOT NULL AND e.workspace_id = c.workspace_id AND e.id <= c.cutoff`,
    [policy.maxPerWorkspace],
  );
  return deleted + (rowCount ?? 0);
}
