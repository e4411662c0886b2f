import { z } from 'zod';
import { fieldMappingSchema } from './meta-lead-mapping.ts';

// What a `meta` lead source keeps: its secrets sealed in lead_sources.secret_ciphertext (the Page
// token, the app's secret that signs the webhooks, the verify token typed into the App
// Dashboard), and in lead_sources.config the Page, the forms and the field mapping.

export const metaSourceSecretSchema = z.object({
  /** A Page access token with `leads_retrieval` (a long-lived or system-user token does not expire). */
  pageAccessToken: z.string().min(1).max(1000),
  /** The Meta app's secret: X-Hub-Signature-256 and appsecret_proof. */
  appSecret: z.string().min(1).max(200),
  /** What the App Dashboard's webhook subscription sends as hub.verify_token. */
  verifyToken: z.string().min(1).max(200),
});
export type MetaSourceSecret = z.output<typeof metaSourceSecretSchema>;

export const metaSourceConfigSchema = z.looseObject({
  /** The Page whose leads this source takes; a webhook entry of another Page is ignored. */
  pageId: z
    .string()
    .regex(/^\d{1,30}$/)
    .optional(),
  /** The forms `source backfill` reads; webhooks name their own form. */
  formIds: z
    .array(z.string().regex(/^\d{1,30}$/))
    .max(100)
    .optional(),
  /** Meta field name → target (meta-lead-mapping.ts), over the defaults. */
  fieldMapping: fieldMappingSchema.optional(),
  /**
   * Leads not from an ad (`is_organic`) to the sandbox: on while the Lead Ads Testing Tool is used
   * with real-looking answers, which Meta does not mark as test leads.
   */
  organicToSandbox: z.boolean().optional(),
});
export type MetaSourceConfig = z.output<typeof metaSourceConfigSchema>;

/** The config as stored, or the defaults when it does not parse (a bad mapping must not lose leads). */
export function readMetaConfig(raw: unknown): MetaSourceConfig {
  const parsed = metaSourceConfigSchema.safeParse(raw ?? {});
  return parsed.success ? parsed.data : {};
}
