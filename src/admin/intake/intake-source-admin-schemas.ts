import { z } from 'zod';
import { fieldMappingSchema } from '../../intake/field-mapping.ts';
import { metaSourceSecretSchema } from '../../intake/meta/meta-source-settings.ts';

// The Form page's connected sources (docs/INTAKE.md, "Generic webhooks", "Google lead forms",
// "Meta Lead Ads" and "The Form page"): each with its URL to paste, its status and last lead. A
// secret is shown once, when it is made (create, rotate); Meta's are typed by the operator and
// never shown again.

const timestamp = z.iso.datetime({ precision: 3 });
const name = z.string().trim().min(1).max(100);
const metaId = z.string().regex(/^\d{1,30}$/, 'Use the numeric id Meta shows.');

export const sourceSchema = z.object({
  id: z.uuid(),
  kind: z.enum(['meta', 'google', 'webhook']),
  name: z.string(),
  url: z.string().meta({ description: 'Where the source posts: paste it into Meta, Google Ads or the sending tool.' }),
  status: z.enum(['waiting', 'active', 'failing', 'revoked']).meta({
    description: 'waiting: no lead yet; active: leads arrive; failing: the last delivery failed; revoked.',
  }),
  sandbox: z.boolean().meta({ description: 'Every lead of this source is a sandbox lead.' }),
  mapping: z
    .record(z.string(), z.unknown())
    .meta({ description: 'Lead field → path in the payload (webhook, Google).' }),
  createdAt: timestamp,
  revokedAt: timestamp.nullable(),
  lastLeadAt: timestamp.nullable(),
  lastError: z.string().nullable(),
  lastErrorAt: timestamp.nullable(),
});
export type SourceAnswer = z.infer<typeof sourceSchema>;
export const sourceListSchema = z.object({ ok: z.literal(true), sources: z.array(sourceSchema) });

export const createSourceBody = z.discriminatedUnion('kind', [
  z.object({
    kind: z.enum(['webhook', 'google']),
    name,
    mapping: fieldMappingSchema.optional(),
    sandbox: z.boolean().optional(),
    secret: z
      .string()
      .trim()
      .min(8)
      .max(200)
      .optional()
      .meta({ description: 'Google: the key typed into Google Ads, if chosen there; made up otherwise.' }),
  }),
  z.object({
    kind: z.literal('meta'),
    name,
    ...metaSourceSecretSchema.shape,
    pageId: metaId.optional(),
    formIds: z.array(metaId).max(100).optional(),
  }),
]);
export const sourceCreatedSchema = z.object({
  ok: z.literal(true),
  source: sourceSchema,
  secret: z.string().nullable().meta({
    description: 'The webhook secret or Google key, this once; null for Meta (the operator typed its secrets).',
  }),
});

export const updateSourceBody = z.object({
  name: name.optional(),
  mapping: fieldMappingSchema.optional(),
  sandbox: z.boolean().optional(),
});
export const sourceUpdatedSchema = z.object({ ok: z.literal(true), source: sourceSchema });
export const secretRotatedSchema = z.object({
  ok: z.literal(true),
  secret: z.string().meta({ description: 'The new secret, this once; the old one stops working at once.' }),
});
