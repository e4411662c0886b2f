import { z } from 'zod';

// The Analytics page's admin API: its query and answer (docs/DASHBOARD.md, "Analytics").

export const ANALYTICS_PERIODS = ['7d', '30d', '90d', 'custom'] as const;
/** The longest custom period: a year of daily rows is what the page can still draw. */
export const MAX_PERIOD_DAYS = 366;

const localDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'Use a date as YYYY-MM-DD.')
  .refine(
    (v) => !Number.isNaN(Date.parse(`${v}T00:00:00Z`)) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v),
    'Not a calendar date; use YYYY-MM-DD.',
  );

export const analyticsQuery = z
  .object({
    period: z
      .enum(ANALYTICS_PERIODS, { error: `Use one of ${ANALYTICS_PERIODS.join(', ')}.` })
      .optional()
      .meta({ description: 'Default 30d.' }),
    from: localDay.optional().meta({
      description: `period=custom: the first local day (included); at most ${MAX_PERIOD_DAYS} days in all.`,
      format: 'date',
    }),
    to: localDay.optional().meta({ description: 'period=custom: the last local day (included).', format: 'date' }),
    sandbox: z
      .enum(['true', 'false'], { error: 'Use true or false.' })
      .optional()
      .meta({ description: 'true: count sandbox leads too.' }),
  })
  .superRefine((q, ctx) => {
    if (q.period !== 'custom') {
      for (const k of ['from', 'to'] as const) {
        if (q[k] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: [k],
            message: `${k} is for period=custom only; add period=custom or leave ${k} out.`,
          });
      }
      return;
    }
    if (!q.from || !q.to) {
      for (const k of ['from', 'to'] as const)
        if (!q[k])
          ctx.addIssue({
            code: 'custom',
            path: [k],
            message: `period=custom needs ${k} (YYYY-MM-DD, the workspace's local day).`,
          });
      return;
    }
    const days = (Date.parse(`${q.to}T00:00:00Z`) - Date.parse(`${q.from}T00:00:00Z`)) / 86_400_000 + 1;
    if (days < 1)
      ctx.addIssue({
        code: 'custom',
        path: ['to'],
        message: 'to is before from; the period runs from from to to, both included.',
      });
    else if (days > MAX_PERIOD_DAYS)
      ctx.addIssue({
        code: 'custom',
        path: ['to'],
        message: `The period is ${days} days; choose at most ${MAX_PERIOD_DAYS}.`,
      });
  });

const funnel = {
  leads: z.number().int(),
  contacted: z.number().int(),
  conversation: z.number().int(),
  booked: z.number().int(),
  unqualified: z.number().int(),
  needsHuman: z.number().int(),
};
const seconds = z.number().nullable();

export const analyticsSchema = z.object({
  ok: z.literal(true),
  channel: z.enum(['voice', 'whatsapp']).meta({ description: "The workspace's one channel." }),
  timeZone: z
    .string()
    .meta({ description: "The workspace's time zone (the agent's, default UTC): days are its local days." }),
  period: z.enum(ANALYTICS_PERIODS),
  from: z.string().meta({ description: 'First local day of the period (included).' }),
  to: z.string().meta({ description: 'Last local day of the period (included; today for the presets).' }),
  sandbox: z.boolean().meta({ description: 'Sandbox leads counted too (live leads only when false).' }),
  totals: z.object({
    ...funnel,
    speedP50Seconds: seconds,
    speedP90Seconds: seconds,
    medianTimeToBookingSeconds: seconds,
  }),
  outcomes: z
    .object({
      booked: z.object({ ai: z.number().int(), person: z.number().int() }),
      unqualified: z.object({ ai: z.number().int(), person: z.number().int() }),
    })
    .meta({
      description:
        'Outcomes (status now) reached by the AI alone (`ai`) and after a person stepped in (`person`: ' +
        'a hand-over to a person, a take-over, a reply or an outcome set by an operator is in the timeline).',
    }),
  reach: z
    .object({
      reached: z.number().int().meta({ description: 'Leads reached: they answered a call or replied.' }),
      byAttempt: z
        .array(z.number().int())
        .meta({ description: 'Leads reached on their 1st, 2nd, 3rd, and 4th or later attempt (four counts).' }),
      neverReached: z
        .number()
        .int()
        .meta({ description: 'Contacted leads whose contact plan ended without reaching them.' }),
      neverReachedShare: z
        .number()
        .nullable()
        .meta({ description: 'neverReached / totals.contacted (0–1); null without contacted leads.' }),
      reachP50Seconds: seconds.meta({ description: "From the lead's creation to its first reach, median." }),
      reachP90Seconds: seconds.meta({ description: "From the lead's creation to its first reach, 90th percentile." }),
    })
    .meta({ description: 'Reaching the leads of the period (their contact plans: docs/DASHBOARD.md, "Analytics").' }),
  days: z.array(
    z.object({
      day: z.string(),
      ...funnel,
      new: z.number().int(),
      inConversation: z.number().int(),
      speedP50Seconds: seconds,
      speedP90Seconds: seconds,
    }),
  ),
  bySource: z
    .array(
      z.object({
        source: z.string().meta({
          description: 'How the leads came in (leads.source): api, form, embed, publishable, meta, google or webhook.',
        }),
        leads: z.number().int(),
        contacted: z.number().int(),
        conversation: z.number().int(),
        booked: z.number().int(),
        contactedShare: z.number().meta({ description: 'contacted / leads (0–1).' }),
        conversationShare: z.number().meta({ description: 'conversation / leads (0–1).' }),
        bookedShare: z.number().meta({ description: 'booked / leads (0–1).' }),
        speedP50Seconds: seconds,
      }),
    )
    .meta({ description: "The period's leads per source, most leads first; sources without leads are left out." }),
  speedBuckets: z
    .array(z.number())
    .meta({ description: 'Upper bounds in seconds (exclusive) of the histogram buckets; the last bucket is open.' }),
  speedHistogram: z
    .array(z.number().int())
    .meta({ description: 'Leads per speed-to-lead bucket (one more than speedBuckets).' }),
});
export type AnalyticsBody = z.infer<typeof analyticsSchema>;
