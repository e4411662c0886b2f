import { z } from 'zod';

// The `agent.contactPlan` section of a workspace (docs/FOLLOW-UP.md): how often and when the agent
// tries again to reach a lead who has not answered. Every field has a default, so a workspace
// without the section follows up as the docs describe; the Agent page and the config file share
// this schema.

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

const HHMM = /^(?:[01]\d|2[0-3]):[0-5]\d$/;
const clockTime = (what: string) => z.string().regex(HHMM, `${what} must be a time such as 09:00`);
const minutes = (what: string) =>
  z
    .number({ error: `${what} must be a number of minutes` })
    .int(`${what} must be whole minutes`)
    .min(1, `${what} must be at least 1 minute`)
    .max(14 * 24 * 60, `${what} must be at most 14 days`);

/** An approved WhatsApp template: Twilio's content SID, or Meta's template name and language. */
export const followUpTemplateSchema = z.union([
  z
    .object({
      contentSid: z.string().regex(/^HX[0-9a-fA-F]{32}$/, 'contentSid must be HX followed by 32 hex characters'),
    })
    .strict(),
  z.object({ name: z.string().trim().min(1).max(512), language: z.string().trim().min(2).max(15) }).strict(),
]);
export type FollowUpTemplate = z.infer<typeof followUpTemplateSchema>;

export const callingWindowSchema = z
  .object({
    days: z
      .array(z.enum(WEEKDAYS))
      .min(1, 'the calling window needs at least one day')
      .default(['mon', 'tue', 'wed', 'thu', 'fri', 'sat']),
    start: clockTime('window.start').default('09:00'),
    // "24:00" closes at midnight.
    end: z.union([clockTime('window.end'), z.literal('24:00')]).default('20:00'),
    // Local dates (YYYY-MM-DD) on which nobody is contacted, such as public holidays.
    holidays: z
      .array(z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a holiday is a date such as 2026-12-25'))
      .max(100)
      .default([]),
  })
  .strict()
  .refine((w) => w.end === '24:00' || w.start < w.end, {
    message: 'window.end must be after window.start',
    path: ['end'],
  });
export type CallingWindowSettings = z.output<typeof callingWindowSchema>;

export const DEFAULT_VOICEMAIL_MESSAGE =
  'Hi {{leadFirstName}}, this is {{agentName}} from {{businessName}} about your enquiry. We will try you again soon.';

export const contactPlanSchema = z
  .object({
    // `immediate`: the first call or message goes out at once (the lead just asked); `in_window`:
    // it too waits for the calling window.
    firstContact: z.enum(['immediate', 'in_window']).default('immediate'),
    window: callingWindowSchema.default(callingWindowSchema.parse({})),
    voice: z
      .object({
        maxAttempts: z.number().int().min(1).max(10).default(4),
        maxAttemptsPer24h: z.number().int().min(1).max(10).default(3),
        // Delay before the 2nd, 3rd… call after a ring-out; later calls go on the next calling day.
        retryAfterMinutes: z.array(minutes('voice.retryAfterMinutes')).max(8).default([2, 30]),
        // After a busy line or a declined call: never straight back.
        busyRetryAfterMinutes: minutes('voice.busyRetryAfterMinutes').default(30),
        nextDayAt: clockTime('voice.nextDayAt').default('10:00'),
        // Spoken at most once per lead per 24 hours (≈ 25 s at most); null: hang up on a machine.
        voicemailMessage: z.string().trim().min(1).max(300).nullable().default(DEFAULT_VOICEMAIL_MESSAGE),
      })
      .strict()
      .default({
        maxAttempts: 4,
        maxAttemptsPer24h: 3,
        retryAfterMinutes: [2, 30],
        busyRetryAfterMinutes: 30,
        nextDayAt: '10:00',
        voicemailMessage: DEFAULT_VOICEMAIL_MESSAGE,
      }),
    whatsapp: z
      .object({
        // Sent when the first template is unanswered, counted from it; without a template of its
        // own a step sends the first-contact template again.
        followUps: z
          .array(
            z
              .object({
                afterHours: z
                  .number()
                  .min(1)
                  .max(30 * 24),
                template: followUpTemplateSchema.optional(),
              })
              .strict(),
          )
          .max(5)
          .default([{ afterHours: 24 }, { afterHours: 72 }]),
        // One nudge when a lead who answered falls silent; null: none.
        nudgeAfterMinutes: minutes('whatsapp.nudgeAfterMinutes').nullable().default(120),
        // The nudge outside the 24-hour window (a free-form message cannot be sent then).
        nudgeTemplate: followUpTemplateSchema.optional(),
        // How long the last step waits for an answer before the lead goes to a person.
        giveUpAfterHours: z
          .number()
          .min(1)
          .max(30 * 24)
          .default(24),
      })
      .strict()
      .default({ followUps: [{ afterHours: 24 }, { afterHours: 72 }], nudgeAfterMinutes: 120, giveUpAfterHours: 24 }),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.voice.maxAttemptsPer24h > p.voice.maxAttempts) {
      ctx.addIssue({
        code: 'custom',
        path: ['voice', 'maxAttemptsPer24h'],
        message: 'maxAttemptsPer24h must not exceed maxAttempts',
      });
    }
    const hours = p.whatsapp.followUps.map((f) => f.afterHours);
    if (hours.some((h, i) => i > 0 && h <= hours[i - 1]!)) {
      ctx.addIssue({
        code: 'custom',
        path: ['whatsapp', 'followUps'],
        message: 'follow-ups must come in order of afterHours',
      });
    }
  });

export type ContactPlanSettings = z.output<typeof contactPlanSchema>;

export const DEFAULT_CONTACT_PLAN: ContactPlanSettings = contactPlanSchema.parse({});

/**
 * The workspace's plan settings, its own or the defaults. Parsed again on read (it was validated
 * when saved): a field added after it was saved takes its default.
 */
export function contactPlanOf(agent: { contactPlan?: unknown } | null): ContactPlanSettings {
  const parsed = contactPlanSchema.safeParse(agent?.contactPlan ?? {});
  return parsed.success ? parsed.data : DEFAULT_CONTACT_PLAN;
}
