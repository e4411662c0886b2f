import { DO_NOT_CONTACT, DO_NOT_CONTACT_MESSAGE, closeSuppressedLead } from '../contact-plan/suppression.ts';
import type { PoolClient } from '../db/pool.ts';
import { inTransaction } from '../leads/lead-lock.ts';
import { lockLeadRow } from '../leads/lead-lock.ts';
import type { TurnSubject } from './conversation-queries.ts';
import { done, type Step } from './turn-context.ts';
import { finishTurn, type AgentTurn } from './turn-queries.ts';

// A message the do-not-contact gate refused (src/contact-plan/suppression-gate.ts): the turn ends
// `failed`, its message row says why it was not sent, and the lead ends visibly (unqualified with
// the note, or the refusal on its timeline when it is booked or with a person). Never retried.

export async function settleSuppressedSend(db: PoolClient, s: TurnSubject, turn: AgentTurn): Promise<Step> {
  await inTransaction(db, async (tx) => {
    await lockLeadRow(tx, s.lead.id); // before the turn's message (lock order)
    await finishTurn(tx, { turnId: turn.id, from: ['generating', 'ready'], to: 'failed', outcome: DO_NOT_CONTACT });
    await tx.query(
      `UPDATE whatsapp_messages SET error_message = $2
        WHERE turn_id = $1 AND direction = 'outbound' AND status = 'failed' AND error_code = $3`,
      [turn.id, DO_NOT_CONTACT_MESSAGE, DO_NOT_CONTACT],
    );
    await closeSuppressedLead(tx, s.lead.id, 'whatsapp');
  });
  return done(DO_NOT_CONTACT);
}
