import type { Queryable } from '../../db/pool.ts';
import { type AnalyticsQuery, CONVERSED } from './analytics-queries.ts';

// The Analytics page's "By source" table (docs/DASHBOARD.md, "Analytics"; issue 37): for each
// intake path a lead came in by (leads.source: the API, the hosted form, the embed, a publishable
// key, Meta, Google, a generic webhook), the period's leads, their speed to lead and how far they
// got. The same cohort and definitions as the rest of the page (analytics-queries.ts): a lead of
// the period was contacted, conversed and booked by its moments in lead_funnel.
//
// One plain statement over lead_funnel joined to leads for their source: the day summaries
// (analytics-days.ts) keep no source, and a period's leads are few enough for a direct read —
// the page shows this table beside the summaries, not instead of them.

export interface SourceFigures {
  source: string;
  leads: number;
  contacted: number;
  conversation: number;
  booked: number;
  /** contacted / leads, conversation / leads, booked / leads (0–1, four decimals). */
  contactedShare: number;
  conversationShare: number;
  bookedShare: number;
  speedP50Seconds: number | null;
}

const share = (n: number, of: number) => (of === 0 ? 0 : Math.round((n / of) * 10_000) / 10_000);
const seconds = (v: unknown): number | null => (v === null || v === undefined ? null : Math.round(Number(v) * 10) / 10);

/** The period's leads per source, most leads first (then by name, so the order is stable). */
export async function analyticsBySource(db: Queryable, q: AnalyticsQuery): Promise<SourceFigures[]> {
  const { rows } = await db.query(
    `SELECT l.source, count(*)::int AS leads,
            count(*) FILTER (WHERE f.contacted_at IS NOT NULL)::int AS contacted,
            count(*) FILTER (WHERE ${CONVERSED('f')})::int AS conversation,
            count(*) FILTER (WHERE f.status = 'booked')::int AS booked,
            -- greatest() as in LEAD_FACTS: a contact recorded a moment before the lead counts as 0 s.
            percentile_cont(0.5) WITHIN GROUP (ORDER BY greatest(0, extract(epoch FROM f.contacted_at - f.created_at)))
              FILTER (WHERE f.contacted_at IS NOT NULL) AS speed_p50
       FROM lead_funnel f JOIN leads l ON l.id = f.lead_id
      WHERE f.workspace_id = $1 AND f.livemode = ANY($2::boolean[])
        AND f.created_at >= ($4::date)::timestamp AT TIME ZONE $3
        AND f.created_at < ($5::date + 1)::timestamp AT TIME ZONE $3
      GROUP BY l.source
      ORDER BY leads DESC, l.source`,
    [q.workspaceId, q.sandbox ? [true, false] : [true], q.timeZone, q.from, q.to],
  );
  return rows.map((r) => ({
    source: r.source,
    leads: r.leads,
    contacted: r.contacted,
    conversation: r.conversation,
    booked: r.booked,
    contactedShare: share(r.contacted, r.leads),
    conversationShare: share(r.conversation, r.leads),
    bookedShare: share(r.booked, r.leads),
    speedP50Seconds: seconds(r.speed_p50),
  }));
}
