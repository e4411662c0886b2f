import type { Pool } from '../../db/pool.ts';
import { recordLeadEvent } from '../../leads/lead-state.ts';
import type { Sandbox } from '../../sandbox/sandbox.ts';
import { AppError } from '../../shared/errors.ts';
import type { Clock } from '../../shared/clock.ts';
import { lockLeadRow } from '../../leads/lead-lock.ts';
import { requestTurn } from '../../whatsapp/conversation-queries.ts';
import { inTransaction, lockLead } from '../../leads/lead-lock.ts';
import { clampMessage, firstName, MESSAGE_LIMITS, templateText } from '../../whatsapp/outbound-text.ts';
import { WINDOW_MS } from '../../whatsapp/turn-context.ts';
import type { WorkspaceService } from '../../workspaces/workspace-service.ts';
import type { LeadStatus } from '../../leads/lead-state.ts';
import { KEPT_STATUSES, type OperatorRef } from './lead-actions.ts';

/** The operator's text, or the workspace's approved template (the only message outside the window). */
export type ReplyContent = { text: string } | { template: true };

export const WINDOW_CLOSED_TEXT =
  'The 24-hour WhatsApp window is closed: providers accept only the approved template now. Send the template, ' +
  'or wait until the lead writes again.';

// An operator's WhatsApp reply (docs/DASHBOARD.md, "Reply"). It goes out through the agent's own
// outbound path: stored as the outbound message of an `operator` turn, ready to send, and sent by
// the turn engine (checkpointed send under a random key stored with it, integration log, delivery
// statuses). Inside the 24-hour window it is the operator's text; outside, only the workspace's
// approved template, the only message the providers accept then, and only when asked for.

export interface OperatorReplyDeps {
  pool: Pool;
  clock: Clock;
  workspaces: WorkspaceService;
  sandbox: Sandbox;
  wake: () => void;
}

export class OperatorReplies {
  readonly #d: OperatorReplyDeps;

  constructor(deps: OperatorReplyDeps) {
    this.#d = deps;
  }

  /**
   * Queues the reply: `text` inside the 24-hour window, else only `{ template: true }` — free text
   * outside it is refused, never swapped for the template behind the operator's back. The lead
   * must be with a person (taken over) or have its outcome (booked, unqualified), which the AI does
   * not answer either. Returns the lead's status.
   */
  async reply(workspaceId: string, leadId: string, op: OperatorRef, message: ReplyContent): Promise<LeadStatus> {
    // The lead's turn lock: no agent turn is half-way while the operator's message is written.
    const lock = await lockLead(this.#d.pool, leadId);
    try {
      const queued = await inTransaction(lock.db, async (tx) => {
        const { rows } = await tx.query(
          `SELECT l.status, l.name, l.livemode, l.last_inbound_at, w.channel, w.id AS workspace_id
             FROM leads l JOIN workspaces w ON w.id = l.workspace_id WHERE l.id = $1 AND l.workspace_id = $2`,
          [leadId, workspaceId],
        );
        const lead = rows[0];
        if (!lead) throw new AppError('lead_not_found');
        if (lead.channel !== 'whatsapp')
          throw new AppError('validation_failed', {
            issues: [{ path: [], message: 'Only WhatsApp leads can be replied to.' }],
          });
        if (lead.status !== 'needs_human' && !KEPT_STATUSES.has(lead.status)) {
          throw new AppError('lead_status_conflict', { message: lead.status });
        }
        const whatsapp = await this.#whatsappSettings(workspaceId, lead.livemode);
        if (!whatsapp)
          throw new AppError('validation_failed', {
            issues: [{ path: [], message: 'WhatsApp is not configured for this workspace.' }],
          });
        await lockLeadRow(tx, leadId);
        // A turn the agent left unfinished when the lead was taken over will never send: close it.
        await tx.query(
          `UPDATE agent_turns SET state = 'cancelled', outcome = 'lead_needs_human', updated_at = now()
            WHERE lead_id = $1 AND state IN ('generating', 'ready')`,
          [leadId],
        );
        await tx.query(
          `UPDATE whatsapp_messages SET status = 'cancelled', status_at = now()
            WHERE lead_id = $1 AND direction = 'outbound' AND status = 'pending'`,
          [leadId],
        );
        const windowOpen =
          lead.last_inbound_at !== null &&
          this.#d.clock().getTime() - new Date(lead.last_inbound_at).getTime() < WINDOW_MS;
        // Refused, not swapped for the template: the operator's text is never thrown away unseen.
        if (!windowOpen && 'text' in message) {
          throw new AppError('validation_failed', { issues: [{ path: ['text'], message: WINDOW_CLOSED_TEXT }] });
        }
        const variables = [firstName(lead.name)];
        const templateId = whatsapp.provider === 'twilio' ? whatsapp.templateContentSid : whatsapp.templateName;
        const content =
          'text' in message
            ? { kind: 'text', body: clampMessage(message.text, MESSAGE_LIMITS[whatsapp.provider]), variables: null }
            : {
                kind: 'template',
                body: templateText(
                  { id: templateId, ...(whatsapp.templateBody ? { body: whatsapp.templateBody } : {}) },
                  variables,
                ),
                variables,
              };
        const { rows: turn } = await tx.query(
          `WITH turn AS (
             INSERT INTO agent_turns (lead_id, kind, state) VALUES ($1, 'operator', 'ready') RETURNING id
           )
           INSERT INTO whatsapp_messages (lead_id, direction, turn_id,
           provider, kind, body, template_variables, idempotency_key, status)
           SELECT $1, 'outbound', id, $2, $3, $4, $5, whatsapp_outbound_key(), 'pending' FROM turn
           RETURNING id, turn_id`,
          [
            leadId,
            whatsapp.provider,
            content.kind,
            content.body,
            content.variables ? JSON.stringify(content.variables) : null,
          ],
        );
        // What the lead wrote so far is answered by this message: in the agent's context it comes
        // before the operator's words, and Resume AI does not answer it a second time.
        await tx.query(
          `UPDATE whatsapp_messages SET turn_id = $2 WHERE lead_id = $1 AND direction = 'inbound' AND turn_id IS NULL`,
          [leadId, turn[0].turn_id],
        );
        await recordLeadEvent(tx, leadId, 'operator.replied', {
          operator: op.name,
          operatorId: op.id,
          messageId: turn[0].id,
          kind: content.kind,
        });
        // The send itself is the turn engine's (a worker), like every message of the lead.
        return { queued: await requestTurn(tx, leadId, lead.workspace_id), status: lead.status as LeadStatus };
      });
      if (queued.queued) this.#d.wake();
      return queued.status;
    } finally {
      await lock.release();
    }
  }

  /** The approved template as this lead would get it (the composer shows it), or null when not configured. */
  async templateFor(workspaceId: string, livemode: boolean, name: string): Promise<string | null> {
    const whatsapp = await this.#whatsappSettings(workspaceId, livemode);
    if (!whatsapp) return null;
    const id = whatsapp.provider === 'twilio' ? whatsapp.templateContentSid : whatsapp.templateName;
    return templateText({ id, ...(whatsapp.templateBody ? { body: whatsapp.templateBody } : {}) }, [firstName(name)]);
  }

  async #whatsappSettings(workspaceId: string, livemode: boolean) {
    if (!livemode) return (await this.#d.sandbox.providers()).settings.whatsapp ?? null;
    const workspace = (await this.#d.workspaces.list()).find((w) => w.id === workspaceId);
    return workspace ? (this.#d.workspaces.settingsOf(workspace).whatsapp ?? null) : null;
  }
}
