// The setup shared by the WhatsApp follow-up tests (docs/FOLLOW-UP.md): the WhatsApp harness on
// a clock that starts at the database's now (the plan's steps are scheduled by the database),
// workspaces whose calling window is always open unless a test says otherwise, and readers of a
// lead's plan. Each test file calls setUpFollowUps() once and gets its own harness and database.
import { after, afterEach, before } from 'node:test';
import type { WorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import { SOLAR_AGENT } from './agent-harness.ts';
import { pendingStep, runDueSteps, timeline } from './contact-plan-harness.ts';
import { uniquePhone } from './http.ts';
import { startWhatsappHarness, type WhatsappHarness, type WhatsappProvider } from './whatsapp-harness.ts';

export const HOUR = 3_600_000;
export const ALWAYS_OPEN = { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' };

export function setUpFollowUps() {
  const s = {} as { h: WhatsappHarness };
  before(async () => {
    s.h = await startWhatsappHarness({ clockStart: Date.now() });
  });
  after(() => s.h.close());
  // One harness and clock for the file: a test's leads must not run their ladder in the next test.
  afterEach(() =>
    s.h.app.db.pool.query(`SELECT contact_plan_end(lead_id, 'test_over') FROM contact_plans WHERE ended_at IS NULL`),
  );

  /** A workspace with the solar agent and these contact-plan settings (the window always open by default). */
  async function workspace(provider: WhatsappProvider, contactPlan: Record<string, unknown> = {}) {
    const agent = { ...SOLAR_AGENT, contactPlan: { window: ALWAYS_OPEN, ...contactPlan } };
    return s.h.workspace(provider, { agent } as unknown as Partial<WorkspaceConfig>);
  }

  /** A lead that got its first template (and, being silent, nothing else). */
  async function silentLead(w: { apiKey: string }): Promise<{ leadId: string; phone: string }> {
    const { leadId, phone } = await s.h.submit(w.apiKey, { phone: uniquePhone() });
    await s.h.settle();
    return { leadId, phone };
  }

  /** Moves the clock on by `ms` and runs every plan step then due, and the turns they queue. */
  async function after_(ms: number): Promise<string[]> {
    s.h.clock.advance(ms);
    const outcomes = await runDueSteps(s.h.app, s.h.clock);
    await s.h.settle();
    return outcomes;
  }

  const pending = (leadId: string) => pendingStep(s.h.app, leadId);
  const events = (leadId: string, types: string[]) => timeline(s.h.app, leadId, types);
  const sentTo = (phone: string) => s.h.twilio.messages.filter((m) => m.to === phone);
  const turns = async (leadId: string) =>
    (
      await s.h.app.db.pool.query('SELECT kind, state, outcome FROM agent_turns WHERE lead_id = $1 ORDER BY id', [
        leadId,
      ])
    ).rows;
  const lead = async (id: string) => (await s.h.app.db.pool.query('SELECT * FROM leads WHERE id = $1', [id])).rows[0];
  const plan = async (id: string) =>
    (await s.h.app.db.pool.query('SELECT * FROM contact_plans WHERE lead_id = $1', [id])).rows[0];

  return {
    setup: s as Readonly<typeof s>,
    workspace,
    silentLead,
    after: after_,
    pending,
    events,
    sentTo,
    turns,
    lead,
    plan,
  };
}
