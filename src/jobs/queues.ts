import type { PgBoss } from 'pg-boss';

/** Every pg-boss queue the service uses, with its retry and dead-letter policy. */
export const AGENT_TURN_QUEUE = 'agent-turn';
export const AGENT_TURN_DEAD_LETTER = 'agent-turn-dead';

export async function ensureQueues(boss: PgBoss): Promise<void> {
  await boss.createQueue(AGENT_TURN_DEAD_LETTER, { retentionSeconds: 30 * 24 * 3600 });
  await boss.createQueue(AGENT_TURN_QUEUE, {
    retryLimit: 5,
    retryDelay: 2,
    retryBackoff: true,
    retryDelayMax: 300,
    deadLetter: AGENT_TURN_DEAD_LETTER,
  });
}
