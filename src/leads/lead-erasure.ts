import type { Pool, PoolClient } from '../db/pool.ts';
import { AGENT_TURN_DEAD_LETTER, AGENT_TURN_QUEUE, CONTACT_ATTEMPT_QUEUE } from '../jobs/queues.ts';
import { inTransaction, lockLead } from './lead-lock.ts';

// Erasing a lead (`leadintake lead delete`, the dashboard's delete): the API refuses a
// repeated phone "until the existing lead is deleted", and a person may ask to be
// forgotten. Everything we hold about the lead goes; what stays is one audit row that says who
// erased which lead id of which workspace, and when — no name, phone, e-mail or text.
//
// What goes, in one transaction:
//   the lead row, and by cascade its timeline, call sessions, agent turns, WhatsApp messages and
//   operators' internal notes (lead_notes);
//   delivery statuses parked for its messages; Vapi tool-call results of its calls;
//   its turn jobs (outbox rows, agent-turn and dead-letter jobs — all but one running right now);
//   the payloads of its integration-log entries: those tagged with the lead, and those of its
//   workspace whose payload contains its phone number (traffic logged before the lead was known).
//   The entries themselves stay, as `{"erased": true}`, so the Logs page keeps its counts.
// A call Vapi still holds for later is kept by its id alone, for the call sweep to cancel.
// What cannot go from here: copies at the providers (Vapi recordings, Twilio / Meta messages,
// Cal.com bookings) — docs/API.md says so.
//
// The lead's own lock (the one a WhatsApp turn holds) is taken first, so a running turn finishes
// before the lead disappears and a turn that starts afterwards finds no lead and ends.

export interface EraseLeadRequest {
  leadId: string;
  /** When given, only a lead of this workspace is erased (the dashboard's scope). */
  workspaceId?: string;
  /** Who asked: `cli:<os user>`, or the operator's account. Stored in the audit row. */
  actor: string;
}

/** What was removed, by count only: this is what the audit row keeps. */
export interface ErasureCounts {
  messages: number;
  callSessions: number;
  integrationEntries: number;
  /** Outbox rows and pg-boss jobs of its turns (waiting, failed, finished, dead-lettered). */
  jobs: number;
}

export async function eraseLead(pool: Pool, req: EraseLeadRequest): Promise<{ erased: boolean }> {
  const lock = await lockLead(pool, req.leadId);
  try {
    return await inTransaction(lock.db, async (tx) => {
      const { rows } = await tx.query(
        `SELECT workspace_id, phone_normalized,
                (SELECT count(*) FROM whatsapp_messages WHERE lead_id = l.id)::int AS messages,
                (SELECT count(*) FROM call_sessions WHERE lead_id = l.id)::int AS call_sessions
           FROM leads l WHERE id = $1 AND ($2::uuid IS NULL OR workspace_id = $2) FOR UPDATE`,
        [req.leadId, req.workspaceId ?? null],
      );
      const lead = rows[0];
      if (!lead) return { erased: false };
      const counts: ErasureCounts = {
        messages: lead.messages,
        callSessions: lead.call_sessions,
        integrationEntries: await scrubIntegrationLog(tx, req.leadId, lead.workspace_id, lead.phone_normalized),
        jobs: await removeTurnJobs(tx, req.leadId),
      };
      await tx.query(
        `DELETE FROM whatsapp_early_statuses s USING whatsapp_messages m
          WHERE m.lead_id = $1 AND m.provider_message_id IS NOT NULL
            AND s.provider = m.provider AND s.provider_message_id = m.provider_message_id`,
        [req.leadId],
      );
      await tx.query('DELETE FROM voice_tool_calls WHERE lead_id = $1', [req.leadId]);
      await keepHeldCallsToCancel(tx, req.leadId);
      await tx.query('DELETE FROM leads WHERE id = $1', [req.leadId]);
      await tx.query(
        `INSERT INTO audit_events (workspace_id, type, subject_id, actor, data) VALUES ($1, 'lead.erased', $2, $3, $4)`,
        [lead.workspace_id, req.leadId, req.actor, JSON.stringify(counts)],
      );
      return { erased: true };
    });
  } finally {
    await lock.release();
  }
}

/**
 * A call Vapi holds for later (a first call outside the calling window) would still ring the
 * erased number: its id (and the workspace, for the key) is kept until the call sweep
 * (src/voice/call-sweep.ts) has cancelled it at Vapi. The erasure itself never waits on Vapi.
 */
async function keepHeldCallsToCancel(tx: PoolClient, leadId: string): Promise<void> {
  await tx.query(
    `INSERT INTO voice_calls_to_cancel (provider_call_id, workspace_id)
     SELECT c.provider_call_id, l.workspace_id FROM call_sessions c JOIN leads l ON l.id = c.lead_id
      WHERE c.lead_id = $1 AND c.status = 'scheduled' AND l.livemode
     ON CONFLICT (provider_call_id) DO NOTHING`,
    [leadId],
  );
}

/** Empties the payloads of the lead's integration-log entries; returns how many. */
async function scrubIntegrationLog(
  tx: PoolClient,
  leadId: string,
  workspaceId: string,
  phone: string,
): Promise<number> {
  // Providers write the number with or without "+" (Meta's wa_id has none): match its digits.
  // Shorter than 7 digits would match too much that is not this number.
  // A number migration 007 found twice is stored as `<E.164>#<lead id>`: only the number counts.
  const digits = phone.split('#')[0]!.replace(/\D/g, '');
  const { rowCount } = await tx.query(
    `UPDATE integration_events SET payload = '{"erased": true}'
      WHERE workspace_id = $2 AND (lead_id = $1 OR ($3::text IS NOT NULL AND strpos(payload::text, $3) > 0))
        AND payload <> '{"erased": true}'`,
    [leadId, workspaceId, digits.length >= 7 ? digits : null],
  );
  return rowCount ?? 0;
}

/**
 * Removes the lead's turn and contact-plan jobs: outbox rows, and pg-boss jobs in any state but running (a queued
 * turn must not run; finished and dead-lettered ones name the lead id, which now means nothing).
 */
async function removeTurnJobs(tx: PoolClient, leadId: string): Promise<number> {
  const outbox = await tx.query(`DELETE FROM outbox WHERE payload->>'leadId' = $1`, [leadId]);
  // pg-boss's schema exists once `migrate` has run (src/runtime.ts), but a bare database in a
  // test may lack it. A job running right now is left alone: it waits for our lock, then finds no lead.
  const { rows } = await tx.query(`SELECT to_regclass('pgboss.job') IS NOT NULL AS installed`);
  if (!rows[0].installed) return outbox.rowCount ?? 0;
  const jobs = await tx.query(
    `DELETE FROM pgboss.job WHERE name = ANY($2::text[]) AND data->>'leadId' = $1 AND state <> 'active'`,
    [leadId, [AGENT_TURN_QUEUE, AGENT_TURN_DEAD_LETTER, CONTACT_ATTEMPT_QUEUE]],
  );
  return (outbox.rowCount ?? 0) + (jobs.rowCount ?? 0);
}
