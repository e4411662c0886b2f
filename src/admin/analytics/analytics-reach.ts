// The reach figures of the Analytics page (docs/DASHBOARD.md, "Analytics"; issue 36): was the lead
// reached — it answered a call or replied — and on which attempt, how long after it came in, and
// which contacted leads the contact plan gave up on without reaching them. The SQL pieces are
// shared by the plain query (analytics-queries.ts) and the day summaries (analytics-days.ts), as
// LEAD_FACTS and FUNNEL_AGGREGATES are.

/** Attempt numbers the page shows apart: 1st, 2nd, 3rd; the last bucket is "4th and later". */
export const REACH_ATTEMPT_BUCKETS = 4;

/**
 * A lead's reach facts from its moments (reached_at, reached_attempt, plan_ended_at, contacted_at,
 * created_at of `t`). An attempt number missing from the timeline entry counts as the first.
 */
export const REACH_FACTS = (t: string) => `CASE WHEN ${t}.reached_at IS NOT NULL
             THEN least(greatest(coalesce(${t}.reached_attempt, 1), 1), ${REACH_ATTEMPT_BUCKETS}) END AS reached_on,
           CASE WHEN ${t}.reached_at IS NOT NULL THEN greatest(0, extract(epoch
           FROM ${t}.reached_at - ${t}.created_at))::float8 END AS to_reach,
           -- Never reached: contacted, the plan is over, and no answer or reply at all.
           (${t}.contacted_at IS NOT NULL AND ${t}.plan_ended_at IS NOT NULL
            AND ${t}.reached_at IS NULL) AS never_reached`;

/** The reach counts over REACH_FACTS rows. */
export const REACH_AGGREGATES = `count(*) FILTER (WHERE reached_on IS NOT NULL)::int AS reached,
           ARRAY[${Array.from(
             { length: REACH_ATTEMPT_BUCKETS },
             (_, i) => `count(*) FILTER (WHERE reached_on = ${i + 1})::int`,
           ).join(', ')}] AS reached_by_attempt,
           count(*) FILTER (WHERE never_reached)::int AS never_reached`;

/**
 * The reach moments of each lead straight from its timeline (`e`, one lead's entries), for the
 * plain query's `timeline` source: the same moments lead_funnel keeps (migrations 045 and 047).
 */
export const REACH_FROM_TIMELINE = (
  e: string,
) => `min(${e}.at) FILTER (WHERE ${e}.type = 'contact.reached') AS reached_at,
               (array_agg((${e}.data->>'attempt')::int ORDER BY ${e}.at, ${e}.id)
                 FILTER (WHERE ${e}.type = 'contact.reached'))[1] AS reached_attempt,
               (array_agg(CASE WHEN ${e}.type = 'contact.plan_ended' THEN ${e}.at END ORDER BY ${e}.id DESC)
                 FILTER (WHERE ${e}.type IN ('contact.plan_ended', 'contact.scheduled')))[1] AS plan_ended_at`;

export interface ReachFigures {
  /** Leads reached (answered a call or replied), whatever the attempt. */
  reached: number;
  /** Leads reached on their 1st, 2nd, 3rd, and 4th or later attempt. */
  byAttempt: number[];
  /** Contacted leads whose contact plan ended without reaching them. */
  neverReached: number;
  /** neverReached / contacted (0–1, four decimals); null without contacted leads. */
  neverReachedShare: number | null;
  /** Time from the lead's creation to its first reach. */
  reachP50Seconds: number | null;
  reachP90Seconds: number | null;
}

export const NO_REACH_BY_ATTEMPT = (): number[] => new Array<number>(REACH_ATTEMPT_BUCKETS).fill(0);

export function neverReachedShare(neverReached: number, contacted: number): number | null {
  return contacted === 0 ? null : Math.round((neverReached / contacted) * 10_000) / 10_000;
}
