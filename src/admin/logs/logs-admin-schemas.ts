import { z } from 'zod';

// Requests and responses of the dashboard's Logs page (docs/DASHBOARD.md, "Logs, dead letters and
// the audit log"): the integration log, the dead letters and the audit log.

const timestamp = z.iso.datetime({ precision: 3 });
const cursor = z
  .string()
  .regex(/^[0-9]{1,18}$/, 'Use the nextCursor of the previous page.')
  .meta({ description: '`nextCursor` of the previous page.' });
const limit = z.coerce.number().int().min(1).max(200).optional().meta({ description: 'Default 50.' });

export const integrationLogQuery = z.object({
  provider: z
    .string()
    .regex(/^[a-z0-9_-]{1,40}$/, 'A provider name such as vapi, twilio, meta, llm.')
    .optional()
    .meta({ description: '`vapi`, `twilio`, `meta`, `llm`, …' }),
  errors: z
    .enum(['true', 'false'])
    .optional()
    .meta({ description: '`true`: failed exchanges only (an error text, or an HTTP status of 400 or more).' }),
  leadId: z.uuid().optional().meta({ description: "One lead's entries." }),
  cursor: cursor.optional(),
  limit,
});
export const auditLogQuery = z.object({ cursor: cursor.optional(), limit });
export const retryAllBody = z.object({});

export const integrationLogSchema = z.object({
  ok: z.literal(true),
  entries: z.array(
    z.object({
      id: z.string(),
      at: timestamp,
      provider: z.string(),
      direction: z
        .enum(['in', 'out'])
        .meta({ description: '`out`: we called the provider; `in`: the provider called us.' }),
      operation: z
        .string()
        .meta({ description: 'What it was: `POST /call`, `POST /Messages.json`, `status-update`, `message`, …' }),
      httpStatus: z
        .number()
        .int()
        .nullable()
        .meta({ description: "The provider's status (out) or ours (in); null when there was no answer." }),
      latencyMs: z.number().int().nullable(),
      outcome: z.string().nullable(),
      error: z.string().nullable(),
      failed: z.boolean(),
      leadId: z.string().nullable(),
      leadExists: z.boolean().meta({ description: 'Whether the lead still exists (erased leads are not linked).' }),
      payload: z.string().meta({
        description: 'The stored payload as JSON text, secrets masked as they were stored; cut at 4,096 characters.',
      }),
      payloadChars: z.number().int().meta({ description: 'The length of the whole stored payload text.' }),
    }),
  ),
  nextCursor: z.string().nullable(),
});

export const deadLettersSchema = z.object({
  ok: z.literal(true),
  deadLetters: z.array(
    z.object({
      id: z.string().meta({ description: 'The turn id, the same `leadintake jobs retry` takes.' }),
      leadId: z.uuid(),
      leadName: z.string(),
      deadAt: timestamp.meta({ description: 'When it arrived in the dead-letter queue.' }),
      createdAt: timestamp.nullable(),
      attempts: z.number().int(),
      reason: z.string().meta({ description: 'Why the last attempt failed.' }),
    }),
  ),
});
export const retriedSchema = z.object({
  ok: z.literal(true),
  retried: z.number().int().meta({ description: 'How many turns went back to the queue.' }),
});

export const auditLogSchema = z.object({
  ok: z.literal(true),
  events: z.array(
    z.object({
      id: z.string(),
      at: timestamp,
      type: z.string().meta({ description: 'What was done, e.g. `lead.erased`, `dead_letter.retried`.' }),
      actor: z
        .string()
        .meta({ description: '`operator:<id>` for the dashboard, `cli:<os user>` for the command line.' }),
      operator: z
        .object({ name: z.string(), email: z.string() })
        .nullable()
        .meta({ description: 'The operator, while the account exists.' }),
      subjectId: z
        .string()
        .nullable()
        .meta({ description: 'The id of what was acted on (a lead, a webhook endpoint, a turn, …).' }),
      subjectIsLead: z
        .boolean()
        .meta({ description: 'Whether the subject is a lead of the workspace that still exists.' }),
    }),
  ),
  nextCursor: z.string().nullable(),
});
