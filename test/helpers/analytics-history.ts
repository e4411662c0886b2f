import type { Queryable } from '../../src/db/pool.ts';
import { defaultAgentConfig } from '../../src/workspaces/agent-config.ts';

// A known lead history for the Analytics page's tests (docs/DASHBOARD.md, "Analytics"), in a
// workspace whose time zone is Europe/Berlin, around the change to summer time on 2026-03-29
// (01:00 UTC). The period 2026-03-27 … 2026-03-30 (Berlin days) holds six live leads:
//
// lead | created (UTC)     | Berlin day | first contact | lead answered | status          | booked after
// F    | 2026-03-27 22:59  | 27 (23:59) | +10 s         | yes           | booked          | 7200 s
// A    | 2026-03-28 10:00  | 28         | +30 s         | yes           | booked          | 3600 s
// B    | 2026-03-28 23:30  | 29 (00:30) | +5 s          | yes           | unqualified     |
// C    | 2026-03-29 12:00  | 29         | +120 s        | no            | in_conversation |
// D    | 2026-03-29 22:30  | 30 (00:30) | +20 s         | yes           | needs_human     |
// E    | 2026-03-30 08:00  | 30         | —             | no            | new             |
//
// plus a sandbox lead S (28th, booked, +1 s) and two live leads just outside the period:
// 2026-03-26 22:30 UTC (the 26th, 23:30 in Berlin) and 2026-03-30 22:30 UTC (the 31st, 00:30).

export const HISTORY_TIME_ZONE = 'Europe/Berlin';
export const HISTORY_FROM = '2026-03-27';
export const HISTORY_TO = '2026-03-30';

interface Seed {
  at: string;
  status: string;
  contactAfter?: number;
  answered?: boolean;
  bookedAfter?: number;
  sandbox?: boolean;
  channel?: 'whatsapp' | 'voice';
}

const HISTORY: Record<string, Seed> = {
  F: { at: '2026-03-27T22:59:00Z', status: 'booked', contactAfter: 10, answered: true, bookedAfter: 7200 },
  A: { at: '2026-03-28T10:00:00Z', status: 'booked', contactAfter: 30, answered: true, bookedAfter: 3600 },
  B: { at: '2026-03-28T23:30:00Z', status: 'unqualified', contactAfter: 5, answered: true },
  C: { at: '2026-03-29T12:00:00Z', status: 'in_conversation', contactAfter: 120 },
  D: { at: '2026-03-29T22:30:00Z', status: 'needs_human', contactAfter: 20, answered: true },
  E: { at: '2026-03-30T08:00:00Z', status: 'new' },
  S: { at: '2026-03-28T12:00:00Z', status: 'booked', contactAfter: 1, answered: true, bookedAfter: 60, sandbox: true },
  before: { at: '2026-03-26T22:30:00Z', status: 'new' },
  after: { at: '2026-03-30T22:30:00Z', status: 'new', contactAfter: 3 },
};

/** Sets the workspace's time zone to Europe/Berlin and inserts the history's leads and timelines. */
export async function seedAnalyticsHistory(db: Queryable, workspaceId: string): Promise<void> {
  await db.query(`UPDATE workspaces SET agent = $2 WHERE id = $1`, [
    workspaceId,
    JSON.stringify({ ...defaultAgentConfig('Analytics'), timeZone: HISTORY_TIME_ZONE }),
  ]);
  let n = 0;
  for (const [name, s] of Object.entries(HISTORY)) {
    // +1 557: a prefix uniquePhone() never makes, so a test may add its own leads to this workspace.
    const phone = `+1557${String(7_000_000 + ++n)}`;
    const { rows } = await db.query(
      `INSERT INTO leads (workspace_id, name, phone, phone_normalized,
        consented_at, status, livemode, created_at, updated_at)
       VALUES ($1, $2, $3, $3, $4, $5, $6, $4, $4) RETURNING id`,
      [workspaceId, `History ${name}`, phone, s.at, s.status, !s.sandbox],
    );
    const id = rows[0].id;
    const event = (type: string, after: number, data: Record<string, unknown> = {}) =>
      db.query(
        `INSERT INTO lead_events (lead_id, type, data, at)
          VALUES ($1, $2, $3, $4::timestamptz + make_interval(secs => $5))`,
        [id, type, JSON.stringify(data), s.at, after],
      );
    await event('lead.created', 0);
    if (s.contactAfter !== undefined)
      await event('message.sent', s.contactAfter, { from: 'new', to: 'in_conversation' });
    if (s.answered) await event('message.received', (s.contactAfter ?? 0) + 60);
    if (s.bookedAfter !== undefined)
      await event('booking.created', s.bookedAfter, { from: 'in_conversation', to: 'booked', actor: 'agent' });
  }
}
