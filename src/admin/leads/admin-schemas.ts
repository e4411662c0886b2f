import { z } from 'zod';
import { LEAD_STATUSES } from '../../leads/lead-state.ts';
import { PERMISSIONS, ROLES } from '../../operators/roles.ts';
import { INBOX_SORTS, PAGE_SIZE_MAX, SEARCH_TOO_SHORT, searchTooShort } from './inbox-queries.ts';
import { inboxFilterFields } from './inbox-filters.ts';
import { messageSchema, olderCursorSchema, timelineEventSchema } from './lead-history-schemas.ts';
import { contactPlanViewSchema, nextAttemptSchema } from './contact-plan-schemas.ts';
import { leadSourceSchema } from './lead-source-view.ts';

// Requests and responses of the admin API (docs/DASHBOARD.md) as zod schemas: they validate the
// requests, type the handlers' answers and become the OpenAPI document's admin part.

const timestamp = z.iso.datetime({ precision: 3 });
const nullableTimestamp = timestamp.nullable();
const status = z.enum(LEAD_STATUSES);

// --- requests
export const signInBody = z.object({ email: z.string().trim().min(3).max(254), password: z.string().min(1).max(200) });
export const signOutQuery = z.object({
  everywhere: z.enum(['true', 'false']).optional().meta({ description: '`true`: end every session of the operator.' }),
});
export const inboxQuery = z.object({
  status: status.optional(),
  q: z
    .string()
    .trim()
    .max(200)
    .refine((q) => !searchTooShort(q), SEARCH_TOO_SHORT)
    .optional()
    .meta({
      description:
        'A phone number in any format, an e-mail address, or part of a name: at least 3 characters ' +
        '(a phone number: 3 digits), else 400.',
    }),
  sandbox: z
    .enum(['true', 'false'])
    .optional()
    .meta({
      description:
        '`true`: sandbox leads too; `false`: live leads only. Absent: ' +
        'sandbox leads too while the workspace has no live lead (`sandbox` in the answer says which).',
    }),
  sort: z
    .enum(INBOX_SORTS)
    .optional()
    .meta({
      description:
        '`newest` (the default): by creation; `activity`: by last activity (`lastActivityAt`). Most recent first. ' +
        '`waiting`: only the leads waiting for a person (needs_human), the longest waiting first.',
    }),
  cursor: z
    .string()
    .max(200)
    .optional()
    .meta({ description: '`nextCursor` of the previous page, with the same `sort`.' }),
  limit: z.coerce.number().int().min(1).max(PAGE_SIZE_MAX).optional(),
  unread: z
    .enum(['true', 'false'])
    .optional()
    .meta({
      description:
        '`true`: only the leads that wrote since you last opened them (`unread`, per operator), ' +
        'whatever their status: a booked or unqualified lead that wrote is listed too.',
    }),
  ...inboxFilterFields,
});
export const outcomeBody = z.object({
  outcome: z.enum(['booked', 'unqualified']),
  note: z.string().trim().min(1).max(2000),
});
export const replyBody = z
  .object({
    text: z
      .string()
      .trim()
      .min(1)
      .max(1600)
      .optional()
      .meta({ description: 'Free text: only inside the 24-hour window (400 naming `text` outside it).' }),
    template: z
      .literal(true)
      .optional()
      .meta({ description: "The workspace's approved template, inside or outside the window." }),
  })
  .refine((b) => (b.text === undefined) !== (b.template === undefined), {
    message: 'Send either text or template: true.',
  });
export const emptyBody = z.object({}).optional();

// --- responses
export const workspaceAccessSchema = z.object({
  slug: z.string(),
  name: z.string(),
  channel: z.enum(['voice', 'whatsapp']),
  role: z.enum(ROLES),
  permissions: z.array(z.enum(PERMISSIONS)),
});

export const sessionSchema = z.object({
  ok: z.literal(true),
  operator: z.object({ id: z.uuid(), email: z.string(), name: z.string() }),
  csrfToken: z.string().meta({ description: 'Send it in the `X-CSRF-Token` header of every POST and DELETE.' }),
  workspaces: z.array(workspaceAccessSchema),
});

export const actionResultSchema = z.object({ ok: z.literal(true), status });

const ownerSchema = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('ai') }),
    z.object({ kind: z.literal('nobody') }),
    z.object({ kind: z.literal('operator'), id: z.uuid(), name: z.string() }),
  ])
  .meta({
    description: 'Who has the lead: the agent, the operator who took it over, or nobody (waiting for a person).',
  });

export const inboxLeadSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  phone: z.string(),
  email: z.string().nullable(),
  status,
  livemode: z.boolean(),
  createdAt: timestamp,
  lastActivityAt: timestamp,
  speedToLeadSeconds: z.number().nullable(),
  owner: ownerSchema,
  waitingSince: nullableTimestamp.meta({
    description: 'Since when the lead waits for a person (needs_human); null otherwise.',
  }),
  unread: z.boolean().meta({ description: 'The lead wrote after you last opened it (read markers are per operator).' }),
  nextAttempt: nextAttemptSchema,
});

export const inboxSchema = z.object({
  ok: z.literal(true),
  leads: z.array(inboxLeadSchema),
  nextCursor: z.string().nullable(),
  counts: z
    .object({
      new: z.int(),
      in_conversation: z.int(),
      booked: z.int(),
      unqualified: z.int(),
      needs_human: z.int(),
      all: z.int(),
    })
    .meta({
      description:
        'Leads per status and in all, of the same search (`q`), filters (`unread` too) and Sandbox switch ' +
        "as the list (the `status` aside): each is the number of leads that status's list holds, up to `countCap`.",
    }),
  countCap: z.int(),
  waiting: z.object({ amberMinutes: z.int(), redMinutes: z.int() }).meta({
    description:
      "The workspace's thresholds (inbox settings): a lead waiting this long for a person shows amber, then red.",
  }),
  sandbox: z.boolean().meta({
    description:
      'Whether sandbox leads are shown: the `sandbox` parameter, or when it is absent, ' +
      'true while the workspace has no live lead (a new or demo workspace shows its sandbox leads).',
  }),
});

const anyObject = z.record(z.string(), z.unknown());

export const leadPageSchema = z.object({
  ok: z.literal(true),
  lead: z.object({
    id: z.uuid(),
    workspaceSlug: z.string(),
    channel: z.enum(['voice', 'whatsapp']),
    status,
    livemode: z.boolean(),
    name: z.string(),
    phone: z.string(),
    phoneNormalized: z.string(),
    email: z.string().nullable(),
    goal: z.string().nullable(),
    qualificationNotes: z.string().nullable(),
    agentNotes: z
      .string()
      .nullable()
      .meta({ description: 'What the agent (voice or WhatsApp) noted for the team with updateLeadProfile.' }),
    answers: z.array(z.object({ id: z.string(), label: z.string().nullable(), value: z.string() })),
    metadata: anyObject,
    formAnswers: z.array(z.object({ id: z.string(), label: z.string().nullable(), value: z.unknown() })),
    consent: z.object({
      at: timestamp,
      ip: z.string().nullable(),
      userAgent: z.string().nullable(),
      text: z
        .object({ version: z.int(), text: z.string() })
        .nullable()
        .meta({ description: 'The exact consent text the lead agreed to (a form lead); null when none was recorded.' }),
    }),
    source: leadSourceSchema,
    bookingUid: z.string().nullable(),
    bookingStart: nullableTimestamp,
    optedOutAt: nullableTimestamp,
    doNotContact: z
      .object({ source: z.enum(['opt_out', 'operator', 'api']), at: timestamp })
      .nullable()
      .meta({
        description:
          "The number is on the workspace's do-not-contact list (since `at`; opt_out, an operator's button, the " +
          'list): nobody calls or messages it. Null otherwise.',
      }),
    createdAt: timestamp,
    updatedAt: timestamp,
    apiKey: z
      .object({ name: z.string(), prefix: z.string() })
      .nullable()
      .meta({
        description:
          'The API key that created the lead (its name and prefix, never the key); ' +
          'null when not created through the public API or before keys were recorded.',
      }),
  }),
  owner: ownerSchema,
  timeZone: z.string().nullable().meta({ description: "The workspace's time zone (the agent's), for the booking." }),
  contactPlan: contactPlanViewSchema,
  whatsappWindow: z
    .object({
      open: z.boolean(),
      until: nullableTimestamp,
      template: z
        .string()
        .nullable()
        .optional()
        .meta({
          description:
            'The approved template as this lead would get it (the only reply outside the window); ' +
            'null when not configured.',
        }),
    })
    .nullable(),
  timeline: z.array(timelineEventSchema).meta({ description: "The timeline's newest page, oldest first." }),
  timelineOlderCursor: olderCursorSchema.meta({
    description: 'GET …/leads/{id}/timeline?before= it for older events; null: none.',
  }),
  messages: z.array(messageSchema).meta({ description: "The WhatsApp thread's newest page, oldest first." }),
  messagesOlderCursor: olderCursorSchema.meta({
    description: 'GET …/leads/{id}/messages?before= it for older messages; null: none.',
  }),
  calls: z.array(
    z.object({
      providerCallId: z.string(),
      status: z.string(),
      startedAt: nullableTimestamp,
      endedAt: nullableTimestamp,
      durationSeconds: z.number().nullable(),
      endedReason: z.string().nullable(),
      summary: z.string().nullable(),
      transcript: z.string().nullable(),
      transcriptTurns: z
        .array(z.object({ speaker: z.enum(['Assistant', 'Lead']), text: z.string() }))
        .meta({ description: 'The transcript split by speaker; empty when there is none.' }),
      recordingUrl: z.string().nullable(),
    }),
  ),
});

export type SessionBody = z.infer<typeof sessionSchema>;
export type InboxBody = z.infer<typeof inboxSchema>;
export type LeadPageBody = z.infer<typeof leadPageSchema>;
export type ActionResult = z.infer<typeof actionResultSchema>;
