import { z } from 'zod';
import { fieldMappingSchema } from '../../intake/field-mapping.ts';
import { fieldMappingSchema as metaFieldMappingSchema } from '../../intake/meta/meta-lead-mapping.ts';
import { metaSourceSecretSchema } from '../../intake/meta/meta-source-settings.ts';

// The Form page's connected sources (docs/INTAKE.md, "Generic webhooks", "Google lead forms",
// "Meta Lead Ads" and "The Form page"): each with its URL to paste, its status and last lead. A
// secret is shown once, when it is made (create, rotate); Meta's are typed by the operator and
// never shown again.

const timestamp = z.iso.datetime({ precision: 3 });
const name = z.string().trim().min(1).max(100);
const metaId = z.string().regex(/^\d{1,30}$/, 'Use the numeric id Meta shows.');

/** A Meta source's own settings as the Form page edits them (docs/INTAKE.md, "Meta Lead Ads"). */
export const metaSettingsSchema = z.object({
  fieldMapping: z.record(z.string(), z.string()).meta({
    description:
      'Meta field name → target, as the intake maps: ' +
      "the defaults for Meta's standard fields with the saved mapping over them. " +
      'A target is name, first_name, last_name, phone, email, goal, ignore, ' +
      'question:<question id> or metadata:<key>; ' +
      "a field in no row is kept in the lead's metadata under its Meta name.",
  }),
  defaults: z
    .record(z.string(), z.string())
    .meta({ description: "The defaults for Meta's standard fields (a saved mapping can change, not remove, them)." }),
  organicToSandbox: z
    .boolean()
    .meta({ description: 'Leads not from an ad (Lead Ads Testing Tool) go to the sandbox.' }),
});
export type MetaSettingsAnswer = z.infer<typeof metaSettingsSchema>;

/** What a Meta source takes on create and edit: validated by the schema the intake reads the config with. */
const metaSettingsInput = {
  fieldMapping: metaFieldMappingSchema.optional().meta({
    description:
      'Meta field name → name, first_name, last_name, phone, email, goal, ignore, question:<id of a question of the ' +
      "workspace's form> or metadata:<key>; replaces the saved mapping " +
      '(the standard fields keep their defaults unless named).',
  }),
  organicToSandbox: z.boolean().optional(),
};

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
    .meta({ description: 'Lead field → path in the payload (webhook, Google); empty for Meta (see `meta`).' }),
  meta: metaSettingsSchema
    .nullable()
    .meta({ description: "A Meta source's field mapping and test leads; null for others." }),
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
    ...metaSettingsInput,
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
  ...metaSettingsInput,
});
export const sourceUpdatedSchema = z.object({ ok: z.literal(true), source: sourceSchema });
export const secretRotatedSchema = z.object({
  ok: z.literal(true),
  secret: z.string().meta({ description: 'The new secret, this once; the old one stops working at once.' }),
});
