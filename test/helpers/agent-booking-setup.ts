// The setup shared by the agent booking tests (listSlots and bookConsult against the Cal.com
// simulator): the agent harness, a workspace, and the simulator reset between tests. Each test
// file calls setUpAgentBooking() once and gets its own harness and database.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach } from 'node:test';
import { recordOfferedSlots } from '../../src/agent/conversation-scope.ts';
import type { WorkspaceRow } from '../../src/workspaces/workspace-queries.ts';
import { AGENT_TEST_NOW, SOLAR_AGENT, startAgentHarness, type AgentHarness } from './agent-harness.ts';

export const MONDAY_9 = '2050-09-05T09:00:00.000+02:00';
export const UNAVAILABLE =
  'Booking is unavailable: this workspace has no scheduling service configured, ' +
  'so there are no times to offer. Tell the lead a colleague will get in touch ' +
  'to arrange the consultation, then call escalateToHuman.';

// bookConsult books only what listSlots offered in the conversation (test/api/agent-booking-remit.test.ts):
// here those offers are recorded as listSlots would have.
export const OFFERED = ['09:00', '09:30', '10:00'].map((t) => `2050-09-05T${t}:00.000+02:00`);

/** Registers the file's hooks; the returned fields are set once `before` has run. */
export function setUpAgentBooking() {
  const s = {} as {
    h: AgentHarness;
    ws: WorkspaceRow;
  };

  before(async () => {
    s.h = await startAgentHarness();
    s.ws = await s.h.workspace();
  });
  after(() => s.h.close());
  beforeEach(() => {
    s.h.sim.bookings.clear();
    s.h.sim.requests.length = 0;
  });
  afterEach(() => s.h.sim.setFailure('none'));

  const schedulingWith = (overrides: Record<string, unknown>) => ({
    agent: SOLAR_AGENT,
    scheduling: { provider: 'calcom', apiKey: s.h.sim.apiKey, eventTypeId: 1001, ...overrides },
  });

  /** A booking made behind the agent's back: by another booker, or by our own lost first attempt. */
  async function bookDirectly(start: string, metadata?: Record<string, string>) {
    const r = await s.h.scheduling.createBooking({
      apiKey: s.h.sim.apiKey,
      eventTypeId: 1001,
      start,
      attendee: { name: 'Someone Else', email: 'else@example.com', timeZone: 'UTC' },
      ...(metadata ? { metadata } : {}),
    });
    assert.ok(r.ok, JSON.stringify(r));
    s.h.sim.requests.length = 0;
    return r.booking;
  }

  const accepted = () => [...s.h.sim.bookings.values()].filter((b) => b.status === 'accepted');

  async function offeredLead(w: WorkspaceRow, overrides?: Parameters<AgentHarness['lead']>[1]): Promise<string> {
    const id = await s.h.lead(w, overrides);
    await recordOfferedSlots(s.h.db.pool, id, 'whatsapp', OFFERED, new Date(AGENT_TEST_NOW));
    return id;
  }

  return { setup: s as Readonly<typeof s>, schedulingWith, bookDirectly, accepted, offeredLead };
}
