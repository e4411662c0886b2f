import type { TestApp, TestClock } from './test-app.ts';

/** A plan step as the database holds it. */
export interface PendingStep {
  leadId: string;
  step: number;
  kind: string;
  at: Date;
}

/** The lead's pending step, or null. */
export async function pendingStep(app: TestApp, leadId: string): Promise<PendingStep | null> {
  const { rows } = await app.db.pool.query(
    'SELECT lead_id, step, next_kind, next_at FROM contact_plans WHERE lead_id = $1 AND next_kind IS NOT NULL',
    [leadId],
  );
  const r = rows[0];
  return r ? { leadId: r.lead_id, step: r.step, kind: r.next_kind, at: r.next_at } : null;
}

/**
 * Runs every plan step due by the test clock, as the contact-attempt jobs would once pg-boss
 * releases them (tests do not wait for pg-boss's real-time `startAfter`): the relay is drained
 * first, then each due step's run(); repeated until none is due. Returns the outcomes in order.
 */
export async function runDueSteps(app: TestApp, clock: TestClock, max = 50): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i < max; i++) {
    await app.relay.drain();
    const { rows } = await app.db.pool.query(
      `SELECT lead_id, step FROM contact_plans
        WHERE next_at IS NOT NULL AND next_at <= $1 AND in_flight_since IS NULL ORDER BY next_at, lead_id LIMIT 1`,
      [clock.read()],
    );
    if (rows.length === 0) break;
    outcomes.push(await app.contactPlans.run(rows[0].lead_id, rows[0].step));
  }
  await app.relay.drain();
  return outcomes;
}

/** The lead's timeline entries of the given types, oldest first. */
export async function timeline(
  app: TestApp,
  leadId: string,
  types: string[],
): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const { rows } = await app.db.pool.query(
    'SELECT type, data FROM lead_events WHERE lead_id = $1 AND type = ANY($2) ORDER BY id',
    [leadId, types],
  );
  return rows;
}
