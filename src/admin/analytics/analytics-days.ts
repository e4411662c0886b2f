import type { Pool, Queryable } from '../../db/pool.ts';
import { withTransaction } from '../../db/pool.ts';
import type { Logger } from '../../shared/logger.ts';
import {
  assembleAnalytics,
  FUNNEL_AGGREGATES,
  LEAD_FACTS,
  SPEED_BUCKETS,
  type AnalyticsQuery,
  type AnalyticsResult,
  type DaySummary,
} from './analytics-queries.ts';
import { REACH_ATTEMPT_BUCKETS } from './analytics-reach.ts';

// What the Analytics page runs (docs/DASHBOARD.md, "Analytics";
// docs/decisions/0012-analytics-day-summaries.md): one summary row per past local day
// (analytics_days, migration 020), written by the first reader that needs it, and today's leads
// read live from lead_funnel. A period of 90 days is then 90 narrow rows and a day of leads,
// instead of every lead of the period.
//
// Exactness: each day's counts and percentiles are what the plain query gives. The period's
// percentiles merge the days' (value, count) pairs, whose values are rounded to 0.1 s below ten
// minutes, to the second below a day and to the minute beyond: finer than the page shows.
//
// Freshness: a change to a lead created more than an hour ago appends a row to
// analytics_changes (migration 020's trigger); a reader first deletes those rows with the
// summaries of the days that hold their leads, under the workspace's advisory lock, so two
// readers cannot put back a summary computed before a change they have not seen. A day counts as
// past two hours after its end, later than any change without a row can still commit.

const ROUNDED = (x: string) =>
  `(CASE WHEN ${x} < 600 THEN round(${x}::numeric, 1) WHEN ${x} < 86400
    THEN round(${x}::numeric) ELSE round(${x}::numeric / 60) * 60 END)::float8`;
const PAIRS = (x: string) => `
  SELECT day, array_agg(v ORDER BY v) AS vs, array_agg(n ORDER BY v) AS ns
    FROM (SELECT day, ${ROUNDED(x)} AS v, count(*)::int AS n FROM facts WHERE ${x} IS NOT NULL GROUP BY 1, 2) p
   GROUP BY day`;

/**
 * The summaries of the days `daysSql` lists (a query of one date column), from lead_funnel.
 * Parameters: $1 workspace, $2 the livemodes counted, $3 time zone, $4 SPEED_BUCKETS.
 */
const DAY_SUMMARIES = (daysSql: string) => `
  WITH days AS (
    SELECT d AS day, (d::timestamp AT TIME ZONE $3) AS starts_at, ((d + 1)::timestamp AT TIME ZONE $3) AS ends_at
      FROM (${daysSql}) x (d)),
  facts AS (
    SELECT days.day, ${LEAD_FACTS('f')}
      FROM days JOIN lead_funnel f
        ON f.workspace_id = $1 AND f.livemode = ANY($2::boolean[])
       AND f.created_at >= days.starts_at AND f.created_at < days.ends_at),
  agg AS (
    SELECT day, ${FUNNEL_AGGREGATES('$4')},
           percentile_cont(0.5) WITHIN GROUP (ORDER BY speed) AS speed_p50,
           percentile_cont(0.9) WITHIN GROUP (ORDER BY speed) AS speed_p90
      FROM facts GROUP BY day),
  speed AS (${PAIRS('speed')}),
  booking AS (${PAIRS('to_booking')}),
  reach AS (${PAIRS('to_reach')})
  SELECT days.day, days.starts_at, days.ends_at,
         coalesce(agg.leads, 0) AS leads, coalesce(agg.contacted,
         0) AS contacted, coalesce(agg.conversation, 0) AS conversation,
         coalesce(agg.booked, 0) AS booked, coalesce(agg.unqualified,
         0) AS unqualified, coalesce(agg.needs_human, 0) AS needs_human,
         coalesce(agg.booked_after_person, 0) AS booked_after_person,
         coalesce(agg.unqualified_after_person, 0) AS unqualified_after_person,
         coalesce(agg.new, 0) AS new, coalesce(agg.in_conversation, 0) AS in_conversation, agg.speed_p50, agg.speed_p90,
         coalesce(agg.speed_histogram, array_fill(0, ARRAY[${SPEED_BUCKETS.length + 1}])) AS speed_histogram,
         coalesce(speed.vs, '{}') AS speed_values, coalesce(speed.ns, '{}') AS speed_counts,
         coalesce(booking.vs, '{}') AS booking_values, coalesce(booking.ns, '{}') AS booking_counts,
         coalesce(agg.reached, 0) AS reached,
         coalesce(agg.reached_by_attempt, array_fill(0, ARRAY[${REACH_ATTEMPT_BUCKETS}])) AS reached_by_attempt,
         coalesce(agg.never_reached, 0) AS never_reached,
         coalesce(reach.vs, '{}') AS reach_values, coalesce(reach.ns, '{}') AS reach_counts
    FROM days LEFT JOIN agg USING (day) LEFT JOIN speed USING (day) LEFT JOIN booking USING (day)
    LEFT JOIN reach USING (day)`;

const COLUMNS = `to_char(day, 'YYYY-MM-DD') AS day, leads, contacted, conversation, booked, unqualified, needs_human,
  booked_after_person, unqualified_after_person, new, in_conversation,
  speed_p50, speed_p90, speed_histogram, speed_values, speed_counts, booking_values, booking_counts,
  reached, reached_by_attempt, never_reached, reach_values, reach_counts`;

/**
 * Deletes the workspace's noted changes with the summaries they make stale. The caller holds the
 * workspace's advisory lock (analyticsLock) in the same transaction.
 */
async function foldChanges(db: Queryable, workspaceId: string): Promise<number> {
  const { rows } = await db.query(
    `WITH gone AS (DELETE FROM analytics_changes WHERE workspace_id = $1 RETURNING livemode, created_at),
          changed AS (SELECT DISTINCT livemode, created_at FROM gone),
          stale AS (
            DELETE FROM analytics_days d USING changed c
             WHERE d.workspace_id = $1 AND (d.with_sandbox OR c.livemode)
               -- A local day is at most 25 hours: the bound on starts_at keeps the index range short.
               AND d.starts_at <= c.created_at AND d.starts_at > c.created_at - interval '26 hours'
               AND c.created_at < d.ends_at)
     SELECT count(*)::int AS n FROM gone`,
    [workspaceId],
  );
  return rows[0].n;
}

const analyticsLock = (db: Queryable, workspaceId: string, wait: boolean) =>
  db.query(
    `SELECT ${wait ? 'pg_advisory_xact_lock' : 'pg_try_advisory_xact_lock'}(hashtextextended('analytics:' || $1,
      0)) AS locked`,
    [workspaceId],
  );

/**
 * The local days from `from` to `to`: those past (the day ended two hours ago by the database's clock, the one the
 * trigger uses) and the rest.
 */
async function splitDays(
  db: Queryable,
  timeZone: string,
  from: string | null,
  to: string | null,
): Promise<{ past: string[]; current: string[] }> {
  // Without bounds: the 90 days before today, the longest preset.
  const { rows } = await db.query(
    `SELECT to_char(d, 'YYYY-MM-DD') AS day, ((d + 1)::timestamp AT TIME ZONE $1) <= now() - interval '2 hours' AS past
       FROM generate_series(coalesce($2::date, (now() AT TIME ZONE $1)::date - 90),
       coalesce($3::date, (now() AT TIME ZONE $1)::date - 1), interval '1 day') g,
            LATERAL (SELECT g::date AS d) x`,
    [timeZone, from, to],
  );
  return { past: rows.filter((d) => d.past).map((d) => d.day), current: rows.filter((d) => !d.past).map((d) => d.day) };
}

/** Writes the summaries of the past days that have none. The caller holds the workspace's lock. */
async function fillDays(
  tx: Queryable,
  q: Pick<AnalyticsQuery, 'workspaceId' | 'timeZone' | 'sandbox'>,
  past: string[],
): Promise<void> {
  await tx.query(
    `INSERT INTO analytics_days (workspace_id, time_zone, with_sandbox,
       day, starts_at, ends_at, leads, contacted, conversation, booked,
       unqualified, needs_human, booked_after_person, unqualified_after_person, new, in_conversation,
       speed_p50, speed_p90,
       speed_histogram, speed_values, speed_counts, booking_values, booking_counts,
       reached, reached_by_attempt, never_reached, reach_values, reach_counts)
     SELECT $1, $3, $6, s.* FROM (${DAY_SUMMARIES(`SELECT d FROM unnest($5::date[]) d
         WHERE NOT EXISTS (SELECT 1 FROM analytics_days a WHERE a.workspace_id = $1 AND a.time_zone = $3
                             AND a.with_sandbox = $6 AND a.day = d)`)}) s`,
    [q.workspaceId, q.sandbox ? [true, false] : [true], q.timeZone, SPEED_BUCKETS, past, q.sandbox],
  );
}

/** The figures of the period, from the day summaries (computing those missing) and today's leads. */
export async function analytics(pool: Pool, q: AnalyticsQuery): Promise<AnalyticsResult> {
  const { past, current } = await splitDays(pool, q.timeZone, q.from, q.to);
  const summaries: DaySummary[] = [];
  if (past.length > 0) {
    await withTransaction(pool, async (tx) => {
      await analyticsLock(tx, q.workspaceId, true);
      await foldChanges(tx, q.workspaceId);
      await fillDays(tx, q, past);
      const { rows } = await tx.query(
        `SELECT ${COLUMNS} FROM analytics_days WHERE workspace_id = $1
          AND time_zone = $2 AND with_sandbox = $3 AND day = ANY($4::date[])`,
        [q.workspaceId, q.timeZone, q.sandbox, past],
      );
      summaries.push(...(rows as DaySummary[]));
    });
  }
  if (current.length > 0) {
    const params = [q.workspaceId, q.sandbox ? [true, false] : [true], q.timeZone, SPEED_BUCKETS, current];
    const { rows } = await pool.query(
      `SELECT ${COLUMNS} FROM (${DAY_SUMMARIES('SELECT unnest($5::date[])')}) s`,
      params,
    );
    summaries.push(...(rows as DaySummary[]));
  }
  return assembleAnalytics(q, summaries);
}

/**
 * A step of the maintenance pass (src/maintenance.ts: every `serve` process, every ten minutes):
 * folds every workspace's noted changes, so analytics_changes stays small where nobody
 * opens the page, and writes the live leads' summaries of the last 90 past days of every
 * workspace with recent leads, in its time zone, so a page load rarely computes a day itself
 * (the first load after a deploy or a change of time zone included). A workspace whose lock
 * another process holds is skipped this time. Returns the changes folded.
 */
export async function maintainAnalyticsDays(pool: Pool, log?: Logger): Promise<number> {
  const { rows } = await pool.query(
    `SELECT * FROM (
       SELECT w.id, coalesce(w.agent->>'timeZone', 'UTC') AS time_zone,
              w.deleted_at IS NULL AND EXISTS (SELECT 1 FROM lead_funnel f
              WHERE f.workspace_id = w.id AND f.created_at > now() - interval '91 days') AS active,
              EXISTS (SELECT 1 FROM analytics_changes c WHERE c.workspace_id = w.id) AS changed
         FROM workspaces w) w
      WHERE active OR changed`,
  );
  let folded = 0;
  for (const w of rows) {
    try {
      folded += await withTransaction(pool, async (tx) => {
        if (!(await analyticsLock(tx, w.id, false)).rows[0].locked) return 0;
        const n = await foldChanges(tx, w.id);
        if (w.active)
          await fillDays(
            tx,
            { workspaceId: w.id, timeZone: w.time_zone, sandbox: false },
            (await splitDays(tx, w.time_zone, null, null)).past,
          );
        return n;
      });
    } catch (err) {
      // One workspace's failure (say, a time zone this PostgreSQL does not know) must not stop the others'.
      log?.warn({ err, workspaceId: w.id }, 'analytics day summaries not maintained');
    }
  }
  return folded;
}
