import { z } from 'zod';
import { LEAD_STATUSES } from './lead-state.ts';
import { jsonValueSchema } from './lead-submission.ts';
import { VAPI_CALL_STATUSES } from '../voice/call-session-merge.ts';

// The response bodies of the public API (docs/API.md) as zod schemas. They are
// the source of the OpenAPI document's response schemas, the handlers' return types, and what
// the tests check every real response against (test/helpers/openapi-conformance.ts).

const timestamp = z.iso.datetime({ precision: 3 }).meta({ description: 'ISO 8601 UTC timestamp with milliseconds.' });
const leadId = z.uuid().meta({ description: 'The lead identifier.' });

export const voiceLeadAcceptedSchema = z
  .object({
    ok: z.literal(true),
    leadId,
    status: z.literal('in_progress'),
    providerCallId: z.string().meta({ description: "The voice provider's call identifier." }),
    callQueued: z.literal(true),
  })
  .meta({ description: 'Voice workspace: the provider accepted the call; the phone rings within about 10 seconds.' });

export const whatsappLeadAcceptedSchema = z
  .object({
    ok: z.literal(true),
    leadId,
    status: z.literal('new'),
    messageQueued: z.literal(true),
  })
  .meta({ description: 'WhatsApp workspace: the first message is queued and sent within seconds.' });

// Where the specification is silent (docs/API.md, "A number on the do-not-contact list"): a voice
// lead whose number must not be called is stored, closed, and said to be so — no call id is invented.
export const voiceLeadNotCalledSchema = z
  .object({
    ok: z.literal(true),
    leadId,
    status: z.literal('unqualified'),
    callQueued: z.literal(false),
  })
  .meta({
    description:
      "Voice workspace: the number is on the workspace's do-not-contact list; " +
      'the lead is stored `unqualified` and nobody calls it.',
  });

export const leadAcceptedSchema = z.xor([
  voiceLeadAcceptedSchema,
  whatsappLeadAcceptedSchema,
  voiceLeadNotCalledSchema,
]);

export const leadStatusSchema = z.enum(LEAD_STATUSES).meta({
  description: '`booked`, `unqualified` and `needs_human` are terminal: they change only by operator action.',
});

export const leadSchema = z.object({
  id: leadId,
  channel: z.enum(['voice', 'whatsapp']),
  name: z.string().meta({ description: 'As submitted.' }),
  phone: z.string().meta({ description: 'As submitted.' }),
  email: z.string().nullable(),
  goal: z.string().nullable(),
  status: leadStatusSchema,
  qualificationNotes: z
    .string()
    .nullable()
    .meta({ description: 'Why the agent decided the lead is not a fit (status `unqualified`).' }),
  bookingUid: z.string().nullable().meta({ description: 'Set when the status is `booked`.' }),
  bookingStart: timestamp
    .nullable()
    .meta({ description: 'Start of the booked consultation; set when the status is `booked`.' }),
  metadata: z.record(z.string(), jsonValueSchema).meta({
    description:
      'The metadata as submitted, pairs whose value is null or "" included ' +
      "(those are only left out of the agent's prompt).",
  }),
  formResponses: z
    .record(z.string(), z.string())
    .meta({ description: 'Answers sent with the submission, by question id (voice workspaces).' }),
  createdAt: timestamp,
  updatedAt: timestamp,
  livemode: z
    .boolean()
    .meta({ description: 'False for a lead submitted with a sandbox key (docs/SANDBOX.md). An addition to the spec.' }),
});

export const voiceCallSchema = z
  .object({
    providerCallId: z
      .string()
      .nullable()
      .meta({ description: "The voice provider's call identifier; null for a call not placed yet (`scheduledAt`)." }),
    status: z.enum(VAPI_CALL_STATUSES).meta({
      description:
        '`ended`: the call is over and will not restart, and no other call of this lead is pending. ' +
        '`scheduled` with `scheduledAt`: the lead is called again then (a retry after no answer, busy or ' +
        'voicemail, or a callback the lead asked for).',
    }),
    startedAt: timestamp.nullable(),
    endedAt: timestamp.nullable(),
    durationSeconds: z.int().nonnegative().nullable(),
    summary: z.string().nullable(),
    transcript: z
      .string()
      .nullable()
      .meta({ description: 'Turns separated by blank lines, each prefixed `Assistant:` or `Lead:`.' }),
    recordingUrl: z.url().nullable(),
    endedReason: z.string().nullable().meta({ description: 'For example `customer-ended-call`.' }),
    scheduledAt: timestamp.optional().meta({
      description:
        'An addition to the spec. Present only while the latest call has ended and the next call is pending: ' +
        'when it will be placed (`status` `scheduled`, every other field null). ' +
        'Absent on a call session.',
    }),
  })
  .meta({
    description:
      'The latest call session of a lead in a voice workspace or, once it has ended, the next call when ' +
      'one is pending (`scheduledAt`).',
  });

export const leadReadSchema = z.object({
  ok: z.literal(true),
  lead: leadSchema,
  voiceCall: voiceCallSchema.nullable().meta({ description: 'Null for WhatsApp workspaces and before a call exists.' }),
});

export type LeadAccepted = z.output<typeof leadAcceptedSchema>;
export type LeadRead = z.output<typeof leadReadSchema>;

// Errors. Every `error` value is listed exactly as the service sends it; a test compares these
// lists with src/http/error-handler.ts.
const errorBase = { ok: z.literal(false) };

export const validationErrorSchema = z.object({
  ...errorBase,
  error: z.literal('Validation failed.'),
  issues: z
    .array(
      z.object({
        path: z.array(z.string()).meta({ description: 'The field, e.g. `["phone"]`; empty for the body itself.' }),
        message: z.string(),
      }),
    )
    .meta({ description: 'Every field that failed, consent included when it is not true as well.' }),
});

export const badRequestErrorSchema = z.object({
  ...errorBase,
  error: z.enum(['Request body must be valid JSON.', '`consent` must be true.', 'Bad request.']).meta({
    description: '`Bad request.`: a malformed HTTP request that never reached the handler.',
  }),
});

export const authenticationErrorSchema = z.object({
  ...errorBase,
  error: z.enum([
    'Missing Authorization header.',
    'Authorization header must use the `Bearer <api key>` scheme.',
    'API key is invalid or revoked.',
    'Secret keys must stay on your server; use a publishable key (li_pub_…) in a browser.',
  ]),
});

/** A publishable key used beyond its rights (docs/API.md, "Keys in a browser"; an addition to the spec). */
export const keyUseErrorSchema = z
  .object({
    ...errorBase,
    error: z.enum([
      'A publishable key can only create leads; read them with a secret key on your server.',
      "This origin is not in the publishable key's allowed origins.",
    ]),
  })
  .meta({ description: 'Only publishable keys (li_pub_…) get this; secret keys never do.' });

export const workspaceNotFoundErrorSchema = z
  .object({ ...errorBase, error: z.literal('Workspace not found.') })
  .meta({ description: "The key's workspace was deleted: revoke and recreate the key." });

export const leadNotFoundErrorSchema = z
  .object({ ...errorBase, error: z.literal('Lead not found.') })
  .meta({ description: 'The id does not exist or belongs to another workspace (indistinguishable on purpose).' });

export const duplicatePhoneErrorSchema = z.object({
  ...errorBase,
  error: z.literal('duplicate_phone'),
  message: z.string(),
  leadId: leadId
    .optional()
    .meta({ description: 'The existing lead (addition to the spec): a retried submission can read it.' }),
});

export const payloadTooLargeErrorSchema = z.object({
  ...errorBase,
  error: z.literal('Request body is too large.'),
  message: z.string(),
});

export const rateLimitedErrorSchema = z.object({ ...errorBase, error: z.literal('Rate limit exceeded.') });

export const internalErrorSchema = z.object({ ...errorBase, error: z.literal('Internal server error.') });

export const voiceDispatchFailedErrorSchema = z.object({
  ...errorBase,
  error: z.literal('voice_dispatch_failed'),
  message: z.string().meta({ description: "The voice provider's response text, unchanged." }),
});

export const serviceBusyErrorSchema = z.object({ ...errorBase, error: z.literal('Service is busy; retry shortly.') });
