import { z } from 'zod';
import { CONVERSED } from '../analytics/analytics-queries.ts';
import { LEAD_SOURCE_KINDS, LEAD_SOURCE_TEXT } from './lead-source-view.ts';

// The inbox's filters beyond status and search (docs/DASHBOARD.md, "Inbox"): the leads behind a
// figure of the Analytics page — created in a period of the workspace's local days, that reached
// a stage of the funnel, handled by the AI alone or after a person stepped in, come in by one
// source (leads.source, the Analytics page's "By source"). The inbox page,
// its CSV export and the Analytics page's links share them, so a link opens exactly the leads a
// figure counts (the same lead_funnel moments, migrations 017 and 042).

export const INBOX_STAGES = ['contacted', 'conversation'] as const;
export const HANDLED_BY = ['ai', 'person'] as const;
export const HANDLED_BY_TEXT =
  '`ai`: no person stepped in; `person`: a hand-over, take-over, reply or outcome by an operator is in the timeline.';

const localDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'Use a date as YYYY-MM-DD.')
  .refine(
    (v) => !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v),
    'Not a calendar date; use YYYY-MM-DD.',
  );

/** The query parameters, added to the inbox's and the CSV export's. */
export const inboxFilterFields = {
  from: localDay.optional().meta({
    description: "Created on or after this local day (YYYY-MM-DD, the workspace's time zone).",
    format: 'date',
  }),
  to: localDay.optional().meta({
    description: "Created on or before this local day (YYYY-MM-DD, the workspace's time zone).",
    format: 'date',
  }),
  reached: z
    .enum(INBOX_STAGES)
    .optional()
    .meta({ description: 'Reached this stage of the funnel, as the Analytics page counts it.' }),
  handledBy: z.enum(HANDLED_BY).optional().meta({ description: HANDLED_BY_TEXT }),
  source: z
    .enum(LEAD_SOURCE_KINDS)
    .optional()
    .meta({ description: `Came in by this source. ${LEAD_SOURCE_TEXT}` }),
};

export interface InboxFilters {
  from?: string;
  to?: string;
  reached?: (typeof INBOX_STAGES)[number];
  handledBy?: (typeof HANDLED_BY)[number];
  source?: (typeof LEAD_SOURCE_KINDS)[number];
  /** The workspace's time zone: the local days of `from` and `to`. */
  timeZone: string;
}

/** The filters present in a parsed query (undefined when none is). */
export function filtersOf(q: Partial<Omit<InboxFilters, 'timeZone'>>, timeZone: string): InboxFilters | undefined {
  const f: InboxFilters = { timeZone };
  if (q.from) f.from = q.from;
  if (q.to) f.to = q.to;
  if (q.reached) f.reached = q.reached;
  if (q.handledBy) f.handledBy = q.handledBy;
  if (q.source) f.source = q.source;
  return Object.keys(f).length > 1 ? f : undefined;
}

/**
 * The filters' SQL condition on the leads table `l` (true without filters), numbering its
 * parameters from `next`; the caller appends `values` to its own.
 */
export function filterCondition(f: InboxFilters | undefined, next: number): { sql: string; values: unknown[] } {
  if (!f) return { sql: 'true', values: [] };
  const values: unknown[] = [];
  const param = (v: unknown) => `$${next + values.push(v) - 1}`;
  const parts: string[] = [];
  if (f.from || f.to) {
    const tz = param(f.timeZone);
    // The local midnights, as the Analytics page's period uses them (a DST day is one day).
    if (f.from) parts.push(`l.created_at >= (${param(f.from)}::date)::timestamp AT TIME ZONE ${tz}::text`);
    if (f.to) parts.push(`l.created_at < (${param(f.to)}::date + 1)::timestamp AT TIME ZONE ${tz}::text`);
  }
  if (f.source) parts.push(`l.source = ${param(f.source)}`);
  const funnel: string[] = [];
  if (f.reached === 'contacted') funnel.push('f.contacted_at IS NOT NULL');
  if (f.reached === 'conversation') funnel.push(CONVERSED('f'));
  if (f.handledBy === 'ai') funnel.push('f.human_at IS NULL');
  if (f.handledBy === 'person') funnel.push('f.human_at IS NOT NULL');
  if (funnel.length > 0) {
    parts.push(`EXISTS (SELECT 1 FROM lead_funnel f WHERE f.lead_id = l.id AND ${funnel.join(' AND ')})`);
  }
  return { sql: parts.length > 0 ? parts.join(' AND ') : 'true', values };
}
