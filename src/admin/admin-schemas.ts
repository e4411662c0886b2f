import { z } from 'zod';
import { LEAD_STATUSES } from '../leads/lead-state.ts';
import { PERMISSIONS, ROLES } from '../operators/roles.ts';
import { INBOX_SORTS, PAGE_SIZE_MAX, SEARCH_TOO_SHORT, searchTooShort } from './inbox-queries.ts';

// Requests and responses of the admin API (docs/DASHBOARD.md) as zod schemas: they validate the
// requests, type the handlers' answers and become the OpenAPI document's admin part.

const timestamp = z.iso.datetime({ precision: 3 });
const nullableTimestamp = timestamp.nullable();
const status = z.enum(LEAD_STATUSES);

// --- requests
export const signInBody = z.object({ email: z.string().trim().min(3).max(254), password: z.string().min(1).max(200) });
export const signOutQuery = z.object({ everywhere: z.enum(['true', 'false']).optional() });
export const inboxQuery = z.object({
  status: status.optional(),
  q: z.string().trim().max(200).refine((q) => !searchTooShort(q), SEARCH_TOO_SHORT).optional(),
  sandbox: z.enum(['true', 'false']).optional(),
  sort: z.enum(INBOX_SORTS).optional(),
  cursor: z.string().max(200).optional(),
  limit: z.coerce.number().int().min(1).max(PAGE_SIZE_MAX).optional(),
});
export const outcomeBody = z.object({ outcome: z.enum(['booked', 'unqualified']), note: z.string().trim().min(1).max(2000) });
export const replyBody = z.object({ text: z.string().trim().min(1).max(1600) });
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

export const okSchema = z.object({ ok: z.literal(true) });
export const actionResultSchema = z.object({ ok: z.literal(true), status });

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
});

export const inboxSchema = z.object({
  ok: z.literal(true),
  leads: z.array(inboxLeadSchema),
  nextCursor: z.string().nullable(),
  counts: z.object({ new: z.int(), in_conversation: z.int(), booked: z.int(), unqualified: z.int(), needs_human: z.int(), all: z.int() })
    .meta({ description: 'Leads per status (all of the filter but the status and search); each stops at `countCap`.' }),
  countCap: z.int(),
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
    answers: z.array(z.object({ id: z.string(), label: z.string().nullable(), value: z.string() })),
    metadata: anyObject,
    formAnswers: z.array(z.object({ id: z.string(), label: z.string().nullable(), value: z.unknown() })),
    consent: z.object({ at: timestamp, ip: z.string().nullable(), userAgent: z.string().nullable() }),
    bookingUid: z.string().nullable(),
    bookingStart: nullableTimestamp,
    optedOutAt: nullableTimestamp,
    createdAt: timestamp,
    updatedAt: timestamp,
    apiKey: z
      .object({ name: z.string(), prefix: z.string() })
      .nullable()
      .meta({ description: 'The API key that created the lead (its name and prefix, never the key); null when not created through the public API or before keys were recorded.' }),
  }),
  timeZone: z.string().nullable().meta({ description: "The workspace's time zone (the agent's), for the booking." }),
  whatsappWindow: z.object({ open: z.boolean(), until: nullableTimestamp }).nullable(),
  timeline: z.array(z.object({ id: z.int(), type: z.string(), data: anyObject, at: timestamp })),
  messages: z.array(z.object({
    id: z.int(),
    direction: z.enum(['inbound', 'outbound']),
    kind: z.string(),
    body: z.string(),
    status: z.string(),
    errorCode: z.string().nullable(),
    errorMessage: z.string().nullable(),
    createdAt: timestamp,
    statusAt: timestamp,
  })),
  truncated: z.boolean(),
  calls: z.array(z.object({
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
  })),
  integrationLog: z.array(z.object({
    id: z.int(),
    provider: z.string(),
    direction: z.enum(['in', 'out']),
    kind: z.string(),
    httpStatus: z.int().nullable(),
    outcome: z.string().nullable(),
    payload: z.unknown(),
    createdAt: timestamp,
  })),
});

export type SessionBody = z.infer<typeof sessionSchema>;
export type InboxBody = z.infer<typeof inboxSchema>;
export type LeadPageBody = z.infer<typeof leadPageSchema>;
export type ActionResult = z.infer<typeof actionResultSchema>;
