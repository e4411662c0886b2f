import { COUNT_CTE, countValues, type BatchStatement, type CountParams } from '../auth/rate-limiter.ts';
import type { Queryable } from '../db/pool.ts';
import { leadsByIdsSql, toLeadWithCall, type LeadWithCall, type NewLead } from './lead-queries.ts';

// The public API's work, done by the statement that counts a key's batch of requests (see
// RateLimiter): the GETs' leads are read and the messaging POSTs' leads are inserted with
// their timeline event and outbox row, all in one round trip and one transaction. One commit
// (one WAL flush) for a whole batch of leads is what lets POST keep up with the bare
// one-lead-per-transaction write (docs/PERFORMANCE.md).

export type LeadOp =
  | { kind: 'read'; leadId: string; workspaceId: string; withCall: boolean }
  /** A messaging lead: inserted with its `lead.created` event and the outbox row of its first agent turn. */
  | { kind: 'insert'; lead: NewLead };

export type LeadOpResult =
  | { kind: 'read'; lead: LeadWithCall | null }
  | { kind: 'inserted'; leadId: string }
  /** The phone is already a lead of the workspace; the id when this batch created it, else null. */
  | { kind: 'duplicate'; leadId: string | null };

// $4 the inserts as a JSON array (with `ord`, the request's 1-based place in the batch), $5 the
// limit, $6 the workspace. Requests past the limit are filtered out before anything is written;
// DISTINCT ON keeps the first of two same-phone requests of one batch, so each inserted lead
// maps back to exactly one request.
const INSERTS = `,
  x AS (
    SELECT DISTINCT ON (x.phone_normalized) x.*
      FROM jsonb_to_recordset($4::jsonb) AS x(ord int, name text, phone text, phone_normalized text, email text, goal text,
             consent_ip text, consent_user_agent text, metadata jsonb, form_responses jsonb, created_event jsonb), c
     WHERE c.count - $3 + x.ord <= $5
     ORDER BY x.phone_normalized, x.ord
  ), lead AS (
    INSERT INTO leads (workspace_id, name, phone, phone_normalized, email, goal, consented_at,
                       consent_ip, consent_user_agent, metadata, form_responses)
    SELECT $6, name, phone, phone_normalized, email, goal, now(), consent_ip, consent_user_agent, metadata, form_responses
      FROM x ORDER BY ord
    ON CONFLICT (workspace_id, phone_normalized) DO NOTHING
    RETURNING id, phone_normalized, created_at
  ), event AS (
    INSERT INTO lead_events (lead_id, type, data, at)
    SELECT lead.id, 'lead.created', x.created_event, lead.created_at FROM lead JOIN x USING (phone_normalized)
  ), turn AS (
    INSERT INTO outbox (queue, payload)
    SELECT 'agent-turn', jsonb_build_object('leadId', id, 'workspaceId', $6::uuid) FROM lead
  )`;

function statementText(inserts: boolean, reads: boolean, withCall: boolean): string {
  const wsParam = inserts ? '$6' : '$4';
  const idsParam = inserts ? '$7' : '$5';
  return `${COUNT_CTE}${inserts ? INSERTS : ''}
    SELECT c.count AS rate_limit_count,
           ${inserts ? `(SELECT jsonb_agg(jsonb_build_array(id, phone_normalized)) FROM lead)` : 'NULL::jsonb'} AS inserted
           ${reads ? ', r.*' : ''}
      FROM c ${reads ? `LEFT JOIN LATERAL (${leadsByIdsSql(idsParam, wsParam, withCall)}) r ON true` : ''}`;
}

export const leadBatchStatement: BatchStatement<LeadOp, LeadOpResult> = {
  async run(db: Queryable, count: CountParams, ops: ReadonlyArray<LeadOp | undefined>) {
    const reads = ops.flatMap((op) => (op?.kind === 'read' ? [op] : []));
    const inserts = ops.flatMap((op, i) => (op?.kind === 'insert' ? [{ ord: i + 1, lead: op.lead }] : []));
    const workspaceId = reads[0]?.workspaceId ?? inserts[0]!.lead.workspaceId;
    const withCall = reads.some((r) => r.withCall);
    // $1–$3 count; then, with inserts, $4 rows and $5 limit; then the workspace; then the read ids.
    const values = [
      ...countValues(count),
      ...(inserts.length > 0 ? [JSON.stringify(inserts.map(insertRow)), count.limit] : []),
      workspaceId,
      ...(reads.length > 0 ? [[...new Set(reads.map((r) => r.leadId))]] : []),
    ];
    const { rows } = await db.query({
      name: `lead-batch-${inserts.length > 0 ? 'i' : ''}${reads.length > 0 ? (withCall ? 'rc' : 'r') : ''}`,
      text: statementText(inserts.length > 0, reads.length > 0, withCall),
      values,
    });
    const leads = new Map<string, LeadWithCall>();
    for (const { rate_limit_count: _count, inserted: _inserted, ...row } of rows) {
      if (row.id) leads.set(row.id, toLeadWithCall(row));
    }
    const created = new Map<string, string>((rows[0].inserted ?? []).map(([id, phone]: [string, string]) => [phone, id]));
    const claimed = new Set<string>();
    const outputs = ops.map((op): LeadOpResult | undefined => {
      if (op?.kind === 'read') return { kind: 'read', lead: leads.get(op.leadId) ?? null };
      if (op?.kind !== 'insert') return undefined;
      const phone = op.lead.phoneNormalized;
      const id = created.get(phone);
      // The first request of the batch with this phone created it; later ones are duplicates.
      if (id && !claimed.has(phone)) {
        claimed.add(phone);
        return { kind: 'inserted', leadId: id };
      }
      return { kind: 'duplicate', leadId: id ?? null };
    });
    return { count: rows[0].rate_limit_count, outputs };
  },
};

function insertRow(e: { ord: number; lead: NewLead }) {
  const l = e.lead;
  return {
    ord: e.ord,
    name: l.name,
    phone: l.phone,
    phone_normalized: l.phoneNormalized,
    email: l.email,
    goal: l.goal,
    consent_ip: l.consentIp,
    consent_user_agent: l.consentUserAgent,
    metadata: l.metadata,
    form_responses: l.formResponses,
    created_event: l.createdEvent,
  };
}
