import { retryOnLostConnection, type Queryable } from '../db/pool.ts';
import { StatementBatcher } from '../db/statement-batcher.ts';
import { leadsByIdPairsSql, toLeadWithCall, type LeadWithCall, type NewLead } from './lead-queries.ts';

// The public API's lead statements, each for the requests of every workspace in flight in the
// process together (src/db/statement-batcher.ts): the WhatsApp POSTs' leads are inserted with
// their timeline event and outbox row, the GETs' leads read. One commit (one WAL flush) for a
// whole batch of leads is what lets POST keep up with the bare one-lead-per-transaction write
// (docs/decisions/0001-batch-the-public-api.md). The requests are counted against their keys' quotas before they get
// here (src/auth/rate-limiter.ts): a refused request never reaches these statements.

export type InsertOutcome =
  | { kind: 'inserted'; leadId: string }
  /** The phone is already a lead of the workspace; the id when this batch created it, else null. */
  | { kind: 'duplicate'; leadId: string | null };

/** One GET's lead: `livemode` is the key's mode; a lead of the other mode reads as not found (docs/SANDBOX.md). */
export interface LeadLookup {
  leadId: string;
  workspaceId: string;
  livemode: boolean;
  /** Voice workspaces: with the lead's latest call session. */
  withCall: boolean;
}

// $1: the leads as a JSON array, each with its place in the batch (`seq`) and its own columns,
// `api_key_id` among them (the lead page's "created by"). DISTINCT ON keeps the first of two
// same-phone leads of one workspace and mode, so each inserted lead maps back to exactly one
// request. Leads are inserted in (workspace, phone) order, so two statements inserting
// overlapping phones wait for each other instead of deadlocking.
const INSERT_LEADS = `WITH x AS (
    SELECT DISTINCT ON (x.workspace_id, x.livemode, x.phone_normalized) x.*
      FROM jsonb_to_recordset($1::jsonb) AS x(seq int, workspace_id uuid, livemode boolean,
             name text, phone text, phone_normalized text, email text, goal text, consent_ip text,
             consent_user_agent text,
             metadata jsonb, form_responses jsonb, created_event jsonb, api_key_id uuid, start_after timestamptz,
             source text, source_id uuid, source_lead_id text, source_detail jsonb, consent_text_id bigint)
     ORDER BY x.workspace_id, x.livemode, x.phone_normalized, x.seq
  ), lead AS (
    INSERT INTO leads (workspace_id, name, phone, phone_normalized, email, goal, consented_at,
                       consent_ip, consent_user_agent, metadata, form_responses, livemode, api_key_id,
                       source, source_id, source_lead_id, source_detail, consent_text_id)
    SELECT workspace_id, name, phone, phone_normalized, email, goal, now(),
    consent_ip, consent_user_agent, metadata, form_responses, livemode, api_key_id,
    coalesce(source, 'api'), source_id, source_lead_id, source_detail, consent_text_id
      FROM x ORDER BY workspace_id, livemode, phone_normalized
    ON CONFLICT (workspace_id, livemode, phone_normalized) DO NOTHING
    RETURNING id, workspace_id, livemode, phone_normalized, created_at
  ), event AS (
    INSERT INTO lead_events (lead_id, type, data, at)
    SELECT lead.id, 'lead.created', x.created_event, lead.created_at
    FROM lead JOIN x USING (workspace_id, livemode, phone_normalized)
  ), turn AS (
    INSERT INTO outbox (queue, payload, start_after)
    SELECT 'agent-turn', jsonb_build_object('leadId', lead.id, 'workspaceId', lead.workspace_id), x.start_after
      FROM lead JOIN x USING (workspace_id, livemode, phone_normalized)
  )
  SELECT id, workspace_id, livemode, phone_normalized FROM lead`;

/**
 * Inserts WhatsApp leads of any workspaces in one statement, each with its `lead.created` event
 * and the outbox row of its first agent turn; one outcome per lead, in their order.
 */
export async function insertLeads(db: Queryable, leads: readonly NewLead[]): Promise<InsertOutcome[]> {
  const { rows } = await db.query({
    name: 'lead-insert',
    text: INSERT_LEADS,
    values: [JSON.stringify(leads.map(insertRow))],
  });
  const created = new Map<string, string>(
    rows.map((r: { id: string; workspace_id: string; livemode: boolean; phone_normalized: string }) => [
      scopeKey(r.workspace_id, r.livemode, r.phone_normalized),
      r.id,
    ]),
  );
  const claimed = new Set<string>();
  return leads.map((l): InsertOutcome => {
    const phone = scopeKey(l.workspaceId, l.livemode, l.phoneNormalized);
    const id = created.get(phone);
    // The first lead of the batch with this phone created it; later ones are duplicates.
    if (id && !claimed.has(phone)) {
      claimed.add(phone);
      return { kind: 'inserted', leadId: id };
    }
    return { kind: 'duplicate', leadId: id ?? null };
  });
}

/** Reads the leads of GETs of any workspaces in one statement; null for one not found in its workspace and mode. */
export async function readLeads(db: Queryable, reads: readonly LeadLookup[]): Promise<Array<LeadWithCall | null>> {
  const withCall = reads.some((r) => r.withCall);
  const { rows } = await db.query({
    name: withCall ? 'lead-read-call' : 'lead-read',
    text: leadsByIdPairsSql('$1', '$2', '$3', withCall),
    values: [reads.map((r) => r.leadId), reads.map((r) => r.workspaceId), reads.map((r) => r.livemode)],
  });
  const found = new Map<string, LeadWithCall>();
  for (const { read_workspace_id: ws, read_livemode: live, ...row } of rows)
    found.set(scopeKey(ws, live, row.id), toLeadWithCall(row));
  return reads.map((r) => found.get(scopeKey(r.workspaceId, r.livemode, r.leadId)) ?? null);
}

/**
 * The public API's leads, batched across requests and workspaces. A lost connection is no
 * request's fault: the whole batch runs again on another connection (docs/RELIABILITY.md). That
 * is safe: reads are reads, and a lead whose insert did commit although its answer was lost is a
 * duplicate (409 with its id, which the spec tells clients to treat as success).
 */
export class LeadBatches {
  readonly #inserts: StatementBatcher<NewLead, InsertOutcome>;
  readonly #reads: StatementBatcher<LeadLookup, LeadWithCall | null>;

  constructor(db: Queryable) {
    // Two inserts in flight: a batch of new leads keeps one PostgreSQL backend busy until its
    // commit (its inserts, their triggers, the WAL flush); with one, PostgreSQL used one of the two
    // cores while the leads behind it waited (docs/decisions/0001-batch-the-public-api.md).
    this.#inserts = new StatementBatcher({
      run: (leads) => retryOnLostConnection(() => insertLeads(db, leads)),
      maxInFlight: 2,
    });
    this.#reads = new StatementBatcher({ run: (reads) => retryOnLostConnection(() => readLeads(db, reads)) });
  }

  /** Inserts a WhatsApp lead; resolves once it is committed. */
  insert(lead: NewLead): Promise<InsertOutcome> {
    return this.#inserts.submit(lead);
  }

  read(r: LeadLookup): Promise<LeadWithCall | null> {
    return this.#reads.submit(r);
  }
}

/** Leads are scoped by workspace and mode: a live key never sees a sandbox lead (docs/SANDBOX.md). */
const scopeKey = (workspaceId: string, livemode: boolean, v: string) =>
  `${workspaceId}/${livemode ? 'live' : 'test'}/${v}`;

function insertRow(l: NewLead, seq: number) {
  return {
    seq,
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
    // The first template waits for the lead's calling window (null: at once).
    start_after: l.firstTurnAfter ?? null,
    source: l.intake?.source ?? 'api',
    source_id: l.intake?.sourceId ?? null,
    source_lead_id: l.intake?.sourceLeadId ?? null,
    source_detail: l.intake?.detail ?? null,
    consent_text_id: l.intake?.consentTextId ?? null,
  };
}
