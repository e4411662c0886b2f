import { z } from 'zod';
import { formSettingsInputSchema, LOGO_TYPES, MAX_LOGO_BYTES } from '../../forms/form-settings-service.ts';

// The Form page's form settings (docs/INTAKE.md, "The hosted form" and "The Form page"): what the
// save takes is the hosted form's own schema (src/forms/form-settings-service.ts); what the page
// reads is written out here for the OpenAPI document. Turnstile's secret is never sent back, only
// whether it is set; the consent text comes with its version (a changed text is a new version).

const timestamp = z.iso.datetime({ precision: 3 });

export const formSettingsBody = formSettingsInputSchema;

export const formSettingsAnswer = z.object({
  ok: z.literal(true),
  settings: z.object({
    language: z.enum(['en', 'de']),
    accentColor: z.string().meta({ description: '#rrggbb' }),
    email: z.enum(['optional', 'required', 'hidden']),
    showGoal: z.boolean(),
    consentText: z
      .string()
      .optional()
      .meta({ description: "The workspace's own consent wording; absent: the default of the form's language." }),
    thankYou: z.string().optional(),
    callerNumber: z.string().optional(),
    whatsappNumber: z.string().optional(),
    selfBookingUrl: z.string().optional(),
    mode: z.enum(['live', 'sandbox']),
    hourlyLimit: z.number().int(),
    turnstile: z.object({ siteKey: z.string(), secretSet: z.boolean() }).nullable(),
  }),
  consent: z
    .object({ id: z.number().int(), version: z.number().int(), text: z.string() })
    .meta({ description: 'The consent text the form shows now; leads keep the version they agreed to.' }),
  logo: z.object({ contentType: z.enum(LOGO_TYPES), bytes: z.number().int(), updatedAt: timestamp }).nullable(),
});
export type FormSettingsAnswer = z.infer<typeof formSettingsAnswer>;

export const logoBody = z.object({
  contentType: z.string().meta({ description: `One of ${LOGO_TYPES.join(', ')}.` }),
  data: z
    .string()
    .max(Math.ceil(MAX_LOGO_BYTES / 3) * 4 + 4)
    .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'data must be the image in base64.')
    .meta({ description: `The image, base64; at most ${MAX_LOGO_BYTES / 1024} KiB decoded.` }),
});
