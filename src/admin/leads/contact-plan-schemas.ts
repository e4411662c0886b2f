import { z } from 'zod';

// The contact plan as the lead page and the inbox show it (docs/DASHBOARD.md, "Follow-ups").

const timestamp = z.iso.datetime({ precision: 3 });
const stepKind = z.enum(['call', 'template', 'nudge', 'callback', 'give_up']);

export const nextAttemptSchema = z
  .object({ kind: stepKind, at: timestamp })
  .nullable()
  .meta({ description: "The plan's pending attempt (`give_up`: the plan ends then); null when none is pending." });

export const contactPlanViewSchema = z
  .object({
    attempts: z.int().meta({ description: 'Attempts made so far, the first contact included.' }),
    leadTimeZones: z.array(z.string()).meta({
      description:
        "The zones the lead's calling window is read in: the lead's own, several for a number of several zones.",
    }),
    next: z
      .object({
        kind: stepKind,
        at: timestamp,
        reason: z.string().meta({ description: 'Why this attempt, in words ("no answer", "first follow-up").' }),
      })
      .nullable(),
    inFlight: z.boolean().meta({ description: 'An attempt is being made right now.' }),
    endedAt: timestamp.nullable(),
    endedReason: z
      .string()
      .nullable()
      .meta({
        description:
          'replied, answered, booked, unqualified, needs_human, not_reached, agent_off, do_not_contact, ' +
          'operator_stopped…',
      }),
    reachedAt: timestamp.nullable(),
  })
  .nullable()
  .meta({ description: 'The follow-up plan; null while the lead has none (no attempt made or planned yet).' });

export type ContactPlanView = z.infer<typeof contactPlanViewSchema>;
