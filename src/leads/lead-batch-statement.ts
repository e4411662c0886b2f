import { COUNT_CTE, countsInOrder, countValues, isAdmitted, type BatchOp, type BatchStatement, type KeyCount } from '../auth/rate-limiter.ts';
import type { Queryable } from '../db/pool.ts';
import { leadsByIdPairsSql, toLeadWithCall, type LeadWithCall, type NewLead } from './lead-queries.ts';

// The public API's work, done by the statement that counts a batch of requests (see
// RateLimiter) — the requests of every key and workspace in flight in the process: the GETs'
// leads are read and the WhatsApp POSTs' leads are inserted with their timeline event and
// outbox row, all in one round trip and one transaction. One commit (one WAL flush) for a whole
// batch of leads is what lets POST keep up with the bare one-lead-per-transaction write
// (docs/PERFORMANCE.md).

export type LeadOp =
  /** `livemode`: the key's mode; a lead of the other mode reads as not found (docs/SANDBOX.md). */
  | { kind: 'read'; leadId: string; workspaceId: string; livemode: boolean; withCall: boolean }
  /** A WhatsApp lead: inserted with its `lead.created` event and the outbox row of its first agent turn. */
  | { kind: 'insert'; lead: NewLead };

export type LeadOpResult =
  | { kind: 'read'; lead: LeadWithCall | null }
  | { kind: 'inserted'; leadId: string }
  /** The phone is already a lead of the workspace; the id when this batch created it, else null. */
  | { kind: 'duplicate'; leadId: string | null };

// $4: the inserts as a JSON array; each row carries its key (`key`), its place among its key's
// requests (`ord`), its key's batch size and limit, and its place in the batch (`seq`); and, like
// `livemode`, its lead's own columns, `api_key_id` among them (the lead page's "created by").
// Requests past their key's limit are filtered out before anything is written; DISTINCT ON keeps
// the first of two same-phone requests of one workspace, so each inserted lead maps back to
// exactly one request. Leads are inserted in (workspace, phone) order, so two processes
// inserting overlapping phones wait for each other instead of deadlocking.
const INSERTS = `,
  x AS (
    SELECT DISTINCT ON (x.workspace_id, x.livemode, x.phone_normalized) x.*
      FROM jsonb_to_recordset($4::jsonb) AS x(key uuid, ord int, size int, lim int, seq int, workspace_id uuid, livemode boolean,
             name text, phone text, phone_normalized text, email text, goal text, consent_ip text, consent_user_agent text,
             metadata jsonb, form_responses jsonb, created_event jsonb, api_key_id uuid)
      LEFT JOIN c ON c.api_key_id = x.key
     WHERE x.key IS NULL OR c.count - x.size + x.ord <= x.lim
     ORDER BY x.workspace_id, x.livemode, x.phone_normalized, x.seq
  ), lead AS (
    INSERT INTO leads (workspace_id, name, phone, phone_normalized, email, goal, consented_at,
                       consent_ip, consent_user_agent, metadata, form_responses, livemode, api_key_id)
    SELECT workspace_id, name, phone, phone_normalized, email, goal, now(), consent_ip, consent_user_agent, metadata, form_responses, livemode, api_key_id
      FROM x ORDER BY workspace_id, livemode, phone_normalized
    ON CONFLICT (workspace_id, livemode, phone_normalized) DO NOTHING
    RETURNING id, workspace_id, livemode, phone_normalized, created_at
  ), event AS (
    INSERT INTO lead_events (lead_id, type, data, at)
    SELECT lead.id, 'lead.created', x.created_event, lead.created_at FROM lead JOIN x USING (workspace_id, livemode, phone_normalized)
  ), turn AS (
    INSERT INTO outbox (queue, payload)
    SELECT 'agent-turn', jsonb_build_object('leadId', id, 'workspaceId', workspace_id) FROM lead
  )`;

function statementText(inserts: boolean, reads: boolean, withCall: boolean): string {
  // Reads: the ids, their workspaces and their keys' modes, after the inserts' parameter when there is one.
  const first = inserts ? 5 : 4;
  return `${COUNT_CTE}${inserts ? INSERTS : ''}
    SELECT (SELECT jsonb_object_agg(api_key_id, count) FROM c) AS rate_limit_counts,
           ${inserts ? `(SELECT jsonb_agg(jsonb_build_array(id, workspace_id, livemode, phone_normalized)) FROM lead)` : 'NULL::jsonb'} AS inserted
           ${reads ? ', r.*' : ''}
      ${reads ? `FROM (SELECT) one LEFT JOIN LATERAL (${leadsByIdPairsSql(`$${first}`, `$${first + 1}`, `$${first + 2}`, withCall)}) r ON true` : ''}`;
}

export const leadBatchStatement: BatchStatement<LeadOp, LeadOpResult> = {
  async run(db: Queryable, windowStart: Date, keys: readonly KeyCount[], ops: readonly BatchOp<LeadOp>[]) {
    const reads = new Map<string, { leadId: string; workspaceId: string; livemode: boolean }>();
    let withCall = false;
    const inserts: ReturnType<typeof insertRow>[] = [];
    ops.forEach((o, seq) => {
      if (o.op.kind === 'read') {
        reads.set(scopeKey(o.op.workspaceId, o.op.livemode, o.op.leadId), o.op);
        withCall ||= o.op.withCall;
      } else {
        // key -1: admitted from a lease (RateLimiter), inserted without a count to check.
        const k = o.key === -1 ? null : keys[o.key]!;
        inserts.push(insertRow(k ? { key: k.apiKeyId, ord: o.ord, size: k.size, lim: k.limit, seq } : { key: null, ord: 0, size: 0, lim: 0, seq }, o.op.lead));
      }
    });
    const values = [
      ...countValues(windowStart, keys),
      ...(inserts.length > 0 ? [JSON.stringify(inserts)] : []),
      ...(reads.size > 0 ? [[...reads.values()].map((r) => r.leadId), [...reads.values()].map((r) => r.workspaceId), [...reads.values()].map((r) => r.livemode)] : []),
    ];
    const { rows } = await db.query({
      name: `lead-batch-${inserts.length > 0 ? 'i' : ''}${reads.size > 0 ? (withCall ? 'rc' : 'r') : ''}`,
      text: statementText(inserts.length > 0, reads.size > 0, withCall),
      values,
    });
    // NULL when every request of the batch was admitted from a lease (no key counted).
    const counted = (rows[0].rate_limit_counts ?? {}) as Record<string, number>;
    const counts = countsInOrder(keys, Object.entries(counted).map(([api_key_id, count]) => ({ api_key_id, count })));
    const leads = new Map<string, LeadWithCall>();
    for (const { rate_limit_counts: _c, inserted: _i, read_workspace_id: ws, read_livemode: live, ...row } of rows) {
      if (row.id) leads.set(scopeKey(ws, live, row.id), toLeadWithCall(row));
    }
    const created = new Map<string, string>(
      (rows[0].inserted ?? []).map(([id, ws, live, phone]: [string, string, boolean, string]) => [scopeKey(ws, live, phone), id]),
    );
    const claimed = new Set<string>();
    const outputs = ops.map((o): LeadOpResult | undefined => {
      if (o.op.kind === 'read') return { kind: 'read', lead: leads.get(scopeKey(o.op.workspaceId, o.op.livemode, o.op.leadId)) ?? null };
      // A refused request inserted nothing and has no answer here (RateLimiter answers 429).
      if (!isAdmitted(keys, counts, o)) return undefined;
      const phone = scopeKey(o.op.lead.workspaceId, o.op.lead.livemode, o.op.lead.phoneNormalized);
      const id = created.get(phone);
      // The first admitted request of the batch with this phone created it; later ones are duplicates.
      if (id && !claimed.has(phone)) {
        claimed.add(phone);
        return { kind: 'inserted', leadId: id };
      }
      return { kind: 'duplicate', leadId: id ?? null };
    });
    return { counts, outputs };
  },
};

/** Leads are scoped by workspace and mode: a live key never sees a sandbox lead (docs/SANDBOX.md). */
const scopeKey = (workspaceId: string, livemode: boolean, v: string) => `${workspaceId}/${livemode ? 'live' : 'test'}/${v}`;

function insertRow(place: { key: string | null; ord: number; size: number; lim: number; seq: number }, l: NewLead) {
  return {
    ...place,
    workspace_id: l.workspaceId,
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
    livemode: l.livemode,
    api_key_id: l.apiKeyId,
  };
}
