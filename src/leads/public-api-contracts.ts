import { z } from 'zod';
import {
  defineRoute,
  named,
  type ApiPart,
  type ContractResponse,
  type Examples,
  type NamedSchema,
} from '../http/route-contract.ts';
import { jsonValueSchema, leadSubmissionDocSchema } from './lead-submission.ts';
import * as s from './public-api-schemas.ts';

// The two routes of the public API (docs/API.md): their contracts, from which lead-routes.ts
// registers them and the OpenAPI document describes them.

type Json = Record<string, unknown>;

const EXAMPLE_LEAD_ID = '0b7e2c1a-5f0d-4c4e-9a39-2f6d3c8e4a11';

const schema = {
  submission: named('LeadSubmission', leadSubmissionDocSchema),
  voiceAccepted: named('VoiceLeadAccepted', s.voiceLeadAcceptedSchema),
  voiceNotCalled: named('VoiceLeadNotCalled', s.voiceLeadNotCalledSchema),
  whatsappAccepted: named('WhatsappLeadAccepted', s.whatsappLeadAcceptedSchema),
  leadRead: named('LeadResponse', s.leadReadSchema),
  validation: named('ValidationError', s.validationErrorSchema),
  badRequest: named('BadRequestError', s.badRequestErrorSchema),
  auth: named('AuthenticationError', s.authenticationErrorSchema),
  keyUse: named('KeyUseError', s.keyUseErrorSchema),
  workspaceNotFound: named('WorkspaceNotFoundError', s.workspaceNotFoundErrorSchema),
  leadNotFound: named('LeadNotFoundError', s.leadNotFoundErrorSchema),
  duplicate: named('DuplicatePhoneError', s.duplicatePhoneErrorSchema),
  tooLarge: named('PayloadTooLargeError', s.payloadTooLargeErrorSchema),
  rateLimited: named('RateLimitedError', s.rateLimitedErrorSchema),
  internal: named('InternalError', s.internalErrorSchema),
  voiceDispatch: named('VoiceDispatchFailedError', s.voiceDispatchFailedErrorSchema),
  busy: named('ServiceBusyError', s.serviceBusyErrorSchema),
};

const HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description: 'Identifies the request in the service logs; quote it when reporting a problem.',
    schema: { type: 'string', format: 'uuid' },
  },
  RateLimit: {
    description:
      'What is left of the hourly quota of this API key (IETF draft): ' +
      '`"hourly";r=<remaining>;t=<seconds until reset>`.',
    schema: { type: 'string', examples: ['"hourly";r=998;t=3412'] },
  },
  'RateLimit-Policy': {
    description: 'The quota of this API key: `"hourly";q=<requests per window>;w=3600`.',
    schema: { type: 'string', examples: ['"hourly";q=1000;w=3600'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 0 },
  },
};

// Headers: every answer names its request; every answer to an authenticated request (all but
// 401) carries the key's quota; 429 says when to retry.
// A load shedder may answer before the request is given its id (503).
const response = (
  description: string,
  body: NamedSchema[],
  opts: { counted?: 'always' | 'maybe'; retryAfter?: 'always' | 'maybe'; shed?: boolean; examples?: Examples } = {},
): ContractResponse => {
  const header = (id: string, required: boolean): Json => ({
    $ref: `#/components/headers/${id}`,
    ...(required ? { required } : {}),
  });
  const headers: Json = { 'X-Request-Id': header('X-Request-Id', !opts.shed) };
  if (opts.counted) {
    headers.RateLimit = header('RateLimit', opts.counted === 'always');
    headers['RateLimit-Policy'] = header('RateLimit-Policy', opts.counted === 'always');
  }
  if (opts.retryAfter) headers['Retry-After'] = header('Retry-After', opts.retryAfter === 'always');
  return {
    description,
    headers,
    body: body.length === 1 ? body[0]! : body,
    ...(opts.examples ? { examples: opts.examples } : {}),
  };
};

const common = {
  '401': response(
    'Authentication failed: no key, not a Bearer key, or a key that is unknown or revoked; ' +
      'or a secret key sent from a browser (with an `Origin` header).',
    [schema.auth],
    {
      examples: {
        invalidKey: {
          summary: 'Unknown or revoked key',
          value: { ok: false, error: 'API key is invalid or revoked.' },
        },
      },
    },
  ),
  '403': response(
    'A publishable key (li_pub_…) reading a lead, or creating one from an origin it does not list ' +
      '(addition to the spec).',
    [schema.keyUse],
  ),
  '429': response("The API key's hourly quota is used up; retry after `Retry-After` seconds.", [schema.rateLimited], {
    counted: 'always',
    retryAfter: 'always',
    examples: {
      rateLimited: { summary: 'Over the hourly quota', value: { ok: false, error: 'Rate limit exceeded.' } },
    },
  }),
  '500': response('An unanticipated failure; retry with exponential backoff.', [schema.internal], { counted: 'maybe' }),
  '503': response('The service is overloaded and sheds load; retry shortly.', [schema.busy], {
    retryAfter: 'maybe',
    shed: true,
  }),
};

/**
 * The body is documented as clients send it (LeadSubmission); the handler parses it itself
 * (lead-submission.ts: read as JSON whatever the Content-Type, the workspace's default country
 * for the phone, and a bad body still counts against the quota).
 */
export const submitLeadContract = defineRoute({
  method: 'POST',
  url: '/api/public/leads',
  operationId: 'submitLead',
  tags: ['Leads'],
  summary: 'Submit a lead',
  description:
    "Creates the lead in the API key's workspace. Voice workspace: the call is placed before the answer, which " +
    "carries the provider's call id (or, with 502, the provider's error). WhatsApp workspace: the first message " +
    'is queued and the answer comes at once. One lead per phone number per workspace: a repeated phone is a 409, ' +
    'which on a retried submission means the first attempt succeeded. No Idempotency-Key header is supported.',
  body: {
    ...schema.submission,
    description: 'Sent as JSON; the body is read as JSON whatever the Content-Type says. At most 64 KiB.',
    examples: {
      whatsapp: {
        summary: 'A lead from a web form',
        value: {
          name: 'Ada Lovelace',
          phone: '+44 20 7946 0958',
          email: 'ada@example.com',
          goal: 'More qualified leads',
          consent: true,
          metadata: { source: 'pricing-page', budget: 5000 },
        },
      },
      voiceWithAnswers: {
        summary: 'A voice lead with form answers',
        value: {
          name: 'Grace Hopper',
          phone: '+1 415 555 0132',
          consent: true,
          formResponses: { q_team_size: '12', q_timeline: 'This quarter' },
        },
      },
    },
  },
  responses: {
    '201': response('The lead was accepted.', [schema.voiceAccepted, schema.whatsappAccepted, schema.voiceNotCalled], {
      counted: 'always',
      examples: {
        voice: {
          summary: 'Voice workspace',
          value: {
            ok: true,
            leadId: EXAMPLE_LEAD_ID,
            status: 'in_progress',
            providerCallId: 'c0a8012e-7d3f-4b6e-8f21-9a0d5b1c2e33',
            callQueued: true,
          },
        },
        whatsapp: {
          summary: 'WhatsApp workspace',
          value: { ok: true, leadId: EXAMPLE_LEAD_ID, status: 'new', messageQueued: true },
        },
        doNotContact: {
          summary: 'Voice workspace, a number on the do-not-contact list',
          value: { ok: true, leadId: EXAMPLE_LEAD_ID, status: 'unqualified', callQueued: false },
        },
      },
    }),
    '400': response(
      'Not JSON, a field fails its checks (`issues` names each), or consent is not `true`. Do not retry unchanged.',
      [schema.validation, schema.badRequest],
      {
        counted: 'maybe',
        examples: {
          validation: {
            summary: 'A bad field',
            value: {
              ok: false,
              error: 'Validation failed.',
              issues: [{ path: ['phone'], message: 'Phone must be a valid E.164-style number.' }],
            },
          },
          consent: { summary: 'Consent missing', value: { ok: false, error: '`consent` must be true.' } },
          json: { summary: 'Not JSON', value: { ok: false, error: 'Request body must be valid JSON.' } },
        },
      },
    ),
    '401': common['401'],
    '403': common['403'],
    '404': response("The key's workspace was deleted.", [schema.workspaceNotFound]),
    '409': response(
      'A lead with this phone already exists in the workspace. ' +
        'On a retried submission this means the first attempt succeeded.',
      [schema.duplicate],
      {
        counted: 'always',
        examples: {
          duplicate: {
            summary: 'Duplicate phone',
            value: {
              ok: false,
              error: 'duplicate_phone',
              message: 'A lead with this phone number already exists in the workspace.',
              leadId: EXAMPLE_LEAD_ID,
            },
          },
        },
      },
    ),
    '413': response('The body is over 64 KiB.', [schema.tooLarge], { counted: 'maybe' }),
    '429': common['429'],
    '500': common['500'],
    '502': response(
      'Voice workspace: the provider refused the call. Nothing was kept (the same phone can be sent again); ' +
        'retry once or twice with backoff.',
      [schema.voiceDispatch],
      {
        counted: 'always',
        examples: {
          rejected: {
            summary: 'Provider refused',
            value: {
              ok: false,
              error: 'voice_dispatch_failed',
              message: '{"message":"Couldn\'t Find Assistant.","error":"Bad Request","statusCode":400}',
            },
          },
        },
      },
    ),
    '503': common['503'],
  },
});

export const getLeadContract = defineRoute({
  method: 'GET',
  url: '/api/public/leads/:id',
  operationId: 'getLead',
  tags: ['Leads'],
  summary: 'Read a lead',
  description: "The lead and, in a voice workspace, its latest call. Only leads of the key's workspace are found.",
  // Any string reaches the handler: an id that is no UUID is a lead that is not found (404).
  params: z.object({
    id: z.string().meta({ description: 'The `leadId` of the submission.', format: 'uuid', example: EXAMPLE_LEAD_ID }),
  }),
  responses: {
    '200': response('The lead and its latest voice call.', [schema.leadRead], {
      counted: 'always',
      examples: {
        booked: {
          summary: 'A booked voice lead',
          value: {
            ok: true,
            lead: {
              id: EXAMPLE_LEAD_ID,
              channel: 'voice',
              name: 'Grace Hopper',
              phone: '+1 415 555 0132',
              email: null,
              goal: null,
              status: 'booked',
              qualificationNotes: null,
              bookingUid: 'bk_3x9Qm2',
              bookingStart: '2026-11-24T15:00:00.000Z',
              metadata: { source: 'pricing-page' },
              formResponses: {},
              createdAt: '2026-11-23T09:12:04.512Z',
              updatedAt: '2026-11-23T09:15:40.020Z',
              livemode: true,
            },
            voiceCall: {
              providerCallId: 'c0a8012e-7d3f-4b6e-8f21-9a0d5b1c2e33',
              status: 'ended',
              startedAt: '2026-11-23T09:12:09.100Z',
              endedAt: '2026-11-23T09:15:38.700Z',
              durationSeconds: 210,
              summary: 'Qualified; booked a consultation for Tuesday 15:00 UTC.',
              transcript: 'Assistant: Hi Grace, this is Ava from Acme.\n\nLead: Hi!',
              recordingUrl: 'https://storage.vapi.ai/c0a8012e.wav',
              endedReason: 'customer-ended-call',
            },
          },
        },
        callAgain: {
          summary: 'A voice lead that did not answer: the next call is pending',
          value: {
            ok: true,
            lead: {
              id: EXAMPLE_LEAD_ID,
              channel: 'voice',
              name: 'Grace Hopper',
              phone: '+1 415 555 0132',
              email: null,
              goal: null,
              status: 'in_conversation',
              qualificationNotes: null,
              bookingUid: null,
              bookingStart: null,
              metadata: { source: 'pricing-page' },
              formResponses: {},
              createdAt: '2026-11-23T09:12:04.512Z',
              updatedAt: '2026-11-23T09:12:41.230Z',
              livemode: true,
            },
            voiceCall: {
              providerCallId: null,
              status: 'scheduled',
              startedAt: null,
              endedAt: null,
              durationSeconds: null,
              summary: null,
              transcript: null,
              recordingUrl: null,
              endedReason: null,
              scheduledAt: '2026-11-23T09:14:41.230Z',
            },
          },
        },
      },
    }),
    '401': common['401'],
    '403': common['403'],
    '404': response(
      "No such lead in this workspace (an unknown id and another workspace's lead look the same), " +
        "or the key's workspace was deleted.",
      [schema.leadNotFound, schema.workspaceNotFound],
      {
        counted: 'maybe',
        examples: { notFound: { summary: 'Unknown id', value: { ok: false, error: 'Lead not found.' } } },
      },
    ),
    '429': common['429'],
    '500': common['500'],
    '503': common['503'],
  },
});

export const PUBLIC_API: ApiPart = {
  routes: [submitLeadContract, getLeadContract],
  // Zod writes JSON values as a recursive anyOf of the six JSON types, which admits exactly what
  // the empty schema admits, and which openapi-typescript turns into a type TypeScript rejects
  // as circular. The empty schema says the same and becomes `unknown`.
  schemas: [
    named('JsonValue', jsonValueSchema, {
      description: 'Any JSON value: string, number, boolean, null, array or object.',
    }),
    named('LeadStatus', s.leadStatusSchema),
    named('Lead', s.leadSchema),
    named('VoiceCall', s.voiceCallSchema),
  ],
  headers: HEADERS,
};
