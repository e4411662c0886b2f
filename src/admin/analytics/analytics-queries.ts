import type { Queryable } from '../../db/pool.ts';
import {
  NO_REACH_BY_ATTEMPT,
  neverReachedShare,
  REACH_AGGREGATES,
  REACH_FACTS,
  REACH_FROM_TIMELINE,
  type ReachFigures,
} from './analytics-reach.ts';

// The Analytics page's numbers (docs/DASHBOARD.md, "Analytics"), from the lead timeline in one
// parameterised statement. A lead belongs to the local day (workspace time zone) it was created
// on, and the period is a cohort: every figure is about the leads created in it, whatever day the
// later steps happened on.
//
// From the timeline (lead_events):
// - contacted: a first contact went out — `message.sent` (WhatsApp), `call.dispatched` or
//   `call.reconciled` (voice: a call whose first server message came before we recorded it);
//   speed to lead (here and in the inbox) is the time to the first one;
// - conversation: a contacted lead answered — `message.received` (a WhatsApp message from the
//   lead) or `call.started` (the call was picked up: Vapi reported it in progress). A lead that
//   wrote without ever being contacted (its number on the do-not-contact list, a first send that
//   failed) is in no stage past "Leads", so each step of the funnel is part of the one before;
//   CONVERSED says it once for these figures, By source and the inbox's `reached=conversation`;
// - booked, unqualified, needs human: the lead's status now; time to booking is from the lead's
//   creation to the first timeline entry that moved it to `booked` (transitionLead writes `to`);
// - after a person: a person stepped in at some point (HUMAN_EVENT): the outcomes split into
//   those the AI reached alone and those reached after a person.

/** Timeline entries that are a first contact (migration 042 keeps the same list in lead_funnel's trigger). */
export const CONTACT_EVENT = (e: string) => `${e}.type IN ('message.sent', 'call.dispatched', 'call.reconciled')`;
/** Timeline entries that mean a person stepped in (the same in migration 042's trigger). */
export const HUMAN_EVENT = (e: string) =>
  `(${e}.data->>'to' = 'needs_human'
    OR ${e}.type IN ('operator.took_over', 'operator.replied', 'operator.outcome_set'))`;

/**
 * Whether the lead of `t` (a lead_funnel row, or its moments' columns) reached the Conversation
 * stage: it answered, and it was contacted (docs/DASHBOARD.md, "Analytics").
 */
export const CONVERSED = (t: string) => `(${t}.conversed_at IS NOT NULL AND ${t}.contacted_at IS NOT NULL)`;

/** Upper bounds (seconds, exclusive) of the speed-to-lead histogram's buckets; the last is open. */
export const SPEED_BUCKETS = [10, 30, 60, 120, 300, 900, 3600, 86400] as const;

export interface AnalyticsQuery {
  workspaceId: string;
  /** Live leads only, or live and sandbox leads (the "Sandbox" switch). */
  sandbox: boolean;
  /** IANA time zone whose local days the period and the daily figures use. */
  timeZone: string;
  /** First and last local day of the period (YYYY-MM-DD), both included. */
  from: string;
  to: string;
}

export interface Funnel {
  leads: number;
  contacted: number;
  conversation: number;
  booked: number;
  unqualified: number;
  needsHuman: number;
}

/** Outcomes reached by the AI alone, and after a person stepped in. */
export interface OutcomeSplit {
  booked: { ai: number; person: number };
  unqualified: { ai: number; person: number };
}

export interface AnalyticsDay extends Funnel {
  day: string;
  new: number;
  inConversation: number;
  speedP50Seconds: number | null;
  speedP90Seconds: number | null;
}

export interface AnalyticsResult {
  totals: Funnel & {
    speedP50Seconds: number | null;
    speedP90Seconds: number | null;
    medianTimeToBookingSeconds: number | null;
  };
  outcomes: OutcomeSplit;
  /** Leads reached, by attempt number, never reached; time to first reach (analytics-reach.ts). */
  reach: ReachFigures;
  days: AnalyticsDay[];
  /** One count per bucket: below SPEED_BUCKETS[0], …, at or above the last bound. */
  speedHistogram: number[];
}

/** The local days from `from` to `to`, both included (calendar arithmetic, no time zone). */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

const seconds = (v: unknown): number | null => (v === null || v === undefined ? null : Math.round(Number(v) * 10) / 10);

// The figures straight from the leads, exact in every part; the page reads day summaries instead
// (src/admin/analytics-days.ts), and the tests and the bench compare the two. Each lead of the
// period with its moments, from either source (the same columns):
// - `timeline`: one lateral pass over each lead's own timeline (index lead_events_lead) — the
//   definition; one index look-up per lead;
// - `funnel`: lead_funnel (migration 017), the same moments kept per lead by triggers; one narrow
//   row per lead off lead_funnel_period.
// The period's bounds are the local midnights, so a 23- or 25-hour DST day is one day.
const PERIOD = (t: string) => `${t}.workspace_id = $1 AND ${t}.livemode = ANY($2::boolean[])
       AND ${t}.created_at >= ($4::date)::timestamp AT TIME ZONE $3
       AND ${t}.created_at < ($5::date + 1)::timestamp AT TIME ZONE $3`;

const SOURCES = {
  timeline: `
    SELECT l.status, l.created_at, f.contacted_at, f.conversed_at, f.booked_at, f.human_at,
           f.reached_at, f.reached_attempt, f.plan_ended_at
      FROM leads l
      LEFT JOIN LATERAL (
        SELECT min(e.at) FILTER (WHERE ${CONTACT_EVENT('e')}) AS contacted_at,
               min(e.at) FILTER (WHERE e.type IN ('message.received', 'call.started')) AS conversed_at,
               min(e.at) FILTER (WHERE e.data->>'to' = 'booked') AS booked_at,
               min(e.at) FILTER (WHERE ${HUMAN_EVENT('e')}) AS human_at,
               ${REACH_FROM_TIMELINE('e')}
          FROM lead_events e WHERE e.lead_id = l.id
      ) f ON true
     WHERE ${PERIOD('l')}`,
  funnel: `
    SELECT f.status, f.created_at, f.contacted_at, f.conversed_at, f.booked_at, f.human_at,
           f.reached_at, f.reached_attempt, f.plan_ended_at
      FROM lead_funnel f
     WHERE ${PERIOD('f')}`,
} as const;
export type AnalyticsSource = keyof typeof SOURCES;

/**
 * A lead's figures from its moments (the columns status, created_at, contacted_at, conversed_at,
 * booked_at, human_at, reached_at, reached_attempt and plan_ended_at of `t`), shared by this query
 * and the day summaries (analytics-days.ts).
 */
export const LEAD_FACTS = (
  t: string,
) => `${t}.status, ${t}.contacted_at IS NOT NULL AS contacted, ${CONVERSED(t)} AS conversed,
           ${t}.human_at IS NOT NULL AS after_person,
           -- greatest() skips NULLs: without the CASE a lead never contacted would count as 0 s.
           CASE WHEN ${t}.contacted_at IS NOT NULL THEN greatest(0, extract(epoch
           FROM ${t}.contacted_at - ${t}.created_at))::float8 END AS speed,
           CASE WHEN ${t}.status = 'booked' AND ${t}.booked_at IS NOT NULL THEN greatest(0,
           extract(epoch FROM ${t}.booked_at - ${t}.created_at))::float8 END AS to_booking,
           ${REACH_FACTS(t)}`;

/** The funnel's counts over LEAD_FACTS rows, and the speed histogram against the bounds in `buckets` (a parameter). */
export const FUNNEL_AGGREGATES = (
  buckets: string,
) => `count(*)::int AS leads, count(*) FILTER (WHERE contacted)::int AS contacted,
           count(*) FILTER (WHERE conversed)::int AS conversation,
           count(*) FILTER (WHERE status = 'booked')::int AS booked,
           count(*) FILTER (WHERE status = 'unqualified')::int AS unqualified,
           count(*) FILTER (WHERE status = 'needs_human')::int AS needs_human,
           count(*) FILTER (WHERE status = 'booked' AND after_person)::int AS booked_after_person,
           count(*) FILTER (WHERE status = 'unqualified' AND after_person)::int AS unqualified_after_person,
           count(*) FILTER (WHERE status = 'new')::int AS "new", count(*)
           FILTER (WHERE status = 'in_conversation')::int AS in_conversation, ${REACH_AGGREGATES},
           ARRAY[${Array.from(
             { length: SPEED_BUCKETS.length + 1 },
             (_, i) => `count(*) FILTER (WHERE width_bucket(speed, ${buckets}::float8[]) = ${i})::int`,
           ).join(', ')}] AS speed_histogram`;

const FACTS = (source: AnalyticsSource) => `
    SELECT (created_at AT TIME ZONE $3)::date AS day, ${LEAD_FACTS('s')}
      FROM (${SOURCES[source]}) s`;

export async function analyticsFromLeads(
  db: Queryable,
  q: AnalyticsQuery,
  source: AnalyticsSource,
): Promise<AnalyticsResult> {
  const { rows: groups } = await db.query(
    // One pass: GROUPING SETS gives each day's row and the period's (day NULL) from the same scan.
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, grouping(day) = 1 AS total, ${FUNNEL_AGGREGATES('$6')},
            percentile_cont(0.5) WITHIN GROUP (ORDER BY speed) AS p50,
            percentile_cont(0.9) WITHIN GROUP (ORDER BY speed) AS p90,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY to_booking) AS to_booking,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY to_reach) AS reach_p50,
            percentile_cont(0.9) WITHIN GROUP (ORDER BY to_reach) AS reach_p90
       FROM (${FACTS(source)}) f
      GROUP BY GROUPING SETS ((day), ())`,
    [q.workspaceId, q.sandbox ? [true, false] : [true], q.timeZone, q.from, q.to, SPEED_BUCKETS],
  );
  const empty = {
    leads: 0,
    contacted: 0,
    conversation: 0,
    booked: 0,
    unqualified: 0,
    needs_human: 0,
    booked_after_person: 0,
    unqualified_after_person: 0,
    new: 0,
    in_conversation: 0,
    reached: 0,
    never_reached: 0,
    p50: null,
    p90: null,
    to_booking: null,
    reach_p50: null,
    reach_p90: null,
  };
  const totalRow = groups.find((g) => g.total) ?? {
    ...empty,
    speed_histogram: new Array(SPEED_BUCKETS.length + 1).fill(0),
    reached_by_attempt: NO_REACH_BY_ATTEMPT(),
  };
  const row = { totals: totalRow, days: groups.filter((g) => !g.total) };
  const funnel = (r: Record<string, any>): Funnel => ({
    leads: r.leads,
    contacted: r.contacted,
    conversation: r.conversation,
    booked: r.booked,
    unqualified: r.unqualified,
    needsHuman: r.needs_human,
  });
  const byDay = new Map<string, Record<string, any>>((row.days as Array<Record<string, any>>).map((d) => [d.day, d]));
  return {
    totals: {
      ...funnel(row.totals),
      speedP50Seconds: seconds(row.totals.p50),
      speedP90Seconds: seconds(row.totals.p90),
      medianTimeToBookingSeconds: seconds(row.totals.to_booking),
    },
    outcomes: split(
      row.totals.booked,
      row.totals.booked_after_person,
      row.totals.unqualified,
      row.totals.unqualified_after_person,
    ),
    reach: {
      reached: row.totals.reached,
      byAttempt: row.totals.reached_by_attempt as number[],
      neverReached: row.totals.never_reached,
      neverReachedShare: neverReachedShare(row.totals.never_reached, row.totals.contacted),
      reachP50Seconds: seconds(row.totals.reach_p50),
      reachP90Seconds: seconds(row.totals.reach_p90),
    },
    days: daysBetween(q.from, q.to).map((day) => {
      const d = byDay.get(day) ?? empty;
      return {
        day,
        ...funnel(d),
        new: d.new,
        inConversation: d.in_conversation,
        speedP50Seconds: seconds(d.p50),
        speedP90Seconds: seconds(d.p90),
      };
    }),
    speedHistogram: row.totals.speed_histogram as number[],
  };
}

function split(
  booked: number,
  bookedAfterPerson: number,
  unqualified: number,
  unqualifiedAfterPerson: number,
): OutcomeSplit {
  return {
    booked: { ai: booked - bookedAfterPerson, person: bookedAfterPerson },
    unqualified: { ai: unqualified - unqualifiedAfterPerson, person: unqualifiedAfterPerson },
  };
}

/** One local day's figures as analytics_days keeps them (src/admin/analytics-days.ts). */
export interface DaySummary {
  day: string;
  leads: number;
  contacted: number;
  conversation: number;
  booked: number;
  unqualified: number;
  needs_human: number;
  booked_after_person: number;
  unqualified_after_person: number;
  new: number;
  in_conversation: number;
  speed_p50: number | null;
  speed_p90: number | null;
  speed_histogram: number[];
  /** (value, count) pairs, values ascending. */
  speed_values: number[];
  speed_counts: number[];
  booking_values: number[];
  booking_counts: number[];
  reached: number;
  reached_by_attempt: number[];
  never_reached: number;
  reach_values: number[];
  reach_counts: number[];
}

/** percentile_cont over the union of the days' (value, count) pairs, as PostgreSQL computes it. */
function mergedPercentiles(
  days: DaySummary[],
  values: 'speed_values' | 'booking_values' | 'reach_values',
  counts: 'speed_counts' | 'booking_counts' | 'reach_counts',
  ps: number[],
): Array<number | null> {
  const merged = new Map<number, number>();
  for (const d of days) d[values].forEach((v, i) => merged.set(v, (merged.get(v) ?? 0) + d[counts][i]!));
  const pairs = [...merged].sort((a, b) => a[0] - b[0]);
  const total = pairs.reduce((n, [, c]) => n + c, 0);
  if (total === 0) return ps.map(() => null);
  const at = (index: number): number => {
    let seen = 0;
    for (const [v, c] of pairs) if ((seen += c) > index) return v;
    return pairs[pairs.length - 1]![0];
  };
  return ps.map((p) => {
    const pos = p * (total - 1);
    const lo = at(Math.floor(pos));
    return lo + (at(Math.ceil(pos)) - lo) * (pos - Math.floor(pos));
  });
}

/** The page's answer from one summary per day of the period (days without leads may be absent). */
export function assembleAnalytics(q: AnalyticsQuery, summaries: DaySummary[]): AnalyticsResult {
  const byDay = new Map(summaries.map((d) => [d.day, d]));
  type Summed =
    | 'leads'
    | 'contacted'
    | 'conversation'
    | 'booked'
    | 'unqualified'
    | 'needs_human'
    | 'booked_after_person'
    | 'unqualified_after_person'
    | 'reached'
    | 'never_reached';
  const sum = (k: Summed) => summaries.reduce((n, d) => n + d[k], 0);
  const [p50, p90] = mergedPercentiles(summaries, 'speed_values', 'speed_counts', [0.5, 0.9]);
  const [toBooking] = mergedPercentiles(summaries, 'booking_values', 'booking_counts', [0.5]);
  const [reachP50, reachP90] = mergedPercentiles(summaries, 'reach_values', 'reach_counts', [0.5, 0.9]);
  const byAttempt = NO_REACH_BY_ATTEMPT();
  for (const d of summaries) d.reached_by_attempt.forEach((n, i) => (byAttempt[i]! += n));
  const histogram = new Array<number>(SPEED_BUCKETS.length + 1).fill(0);
  for (const d of summaries) d.speed_histogram.forEach((n, i) => (histogram[i]! += n));
  return {
    totals: {
      leads: sum('leads'),
      contacted: sum('contacted'),
      conversation: sum('conversation'),
      booked: sum('booked'),
      unqualified: sum('unqualified'),
      needsHuman: sum('needs_human'),
      speedP50Seconds: seconds(p50),
      speedP90Seconds: seconds(p90),
      medianTimeToBookingSeconds: seconds(toBooking),
    },
    outcomes: split(sum('booked'), sum('booked_after_person'), sum('unqualified'), sum('unqualified_after_person')),
    reach: {
      reached: sum('reached'),
      byAttempt,
      neverReached: sum('never_reached'),
      neverReachedShare: neverReachedShare(sum('never_reached'), sum('contacted')),
      reachP50Seconds: seconds(reachP50),
      reachP90Seconds: seconds(reachP90),
    },
    days: daysBetween(q.from, q.to).map((day) => {
      const d = byDay.get(day);
      return {
        day,
        leads: d?.leads ?? 0,
        contacted: d?.contacted ?? 0,
        conversation: d?.conversation ?? 0,
        booked: d?.booked ?? 0,
        unqualified: d?.unqualified ?? 0,
        needsHuman: d?.needs_human ?? 0,
        new: d?.new ?? 0,
        inConversation: d?.in_conversation ?? 0,
        speedP50Seconds: seconds(d?.speed_p50),
        speedP90Seconds: seconds(d?.speed_p90),
      };
    }),
    speedHistogram: histogram,
  };
}
