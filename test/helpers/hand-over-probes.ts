import { AGENT_TURN_DEAD_LETTER } from '../../src/jobs/queues.ts';
import { leadEvents } from './agent-harness.ts';
import type { WhatsappHarness } from './whatsapp-harness.ts';

/**
 * What the last-attempt tests read of a lead: its status, its hand-overs, what was sent to it and
 * its dead-lettered turns. `harness` is called at each read (the harness starts in `before`).
 */
export function handOverProbes(harness: () => WhatsappHarness) {
  const q = async (text: string, values: unknown[]) => (await harness().app.db.pool.query(text, values)).rows;
  return {
    q,
    status: async (leadId: string) => (await q('SELECT status FROM leads WHERE id = $1', [leadId]))[0].status,
    escalations: async (leadId: string) =>
      (await leadEvents(harness().app.db.pool, leadId))
        .filter((e) => e.type === 'conversation.escalated')
        .map((e) => e.data),
    sentTo: (phone: string) => harness().twilio.messages.filter((m) => m.to === phone),
    deadLetters: async (leadId: string) =>
      (
        await q(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND data->>'leadId' = $2`, [
          AGENT_TURN_DEAD_LETTER,
          leadId,
        ])
      )[0].n as number,
  };
}
