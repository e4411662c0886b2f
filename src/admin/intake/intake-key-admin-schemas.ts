import { z } from 'zod';
import { MAX_ALLOWED_ORIGINS } from '../../workspaces/api-key-publishable.ts';

// The Form page's publishable keys (docs/INTAKE.md, "Embed and publishable keys" and "The Form
// page"): `li_pub_live_…` / `li_pub_test_…` keys a site's own form may use from the browser
// origins listed. The key itself is in the create answer only.

const timestamp = z.iso.datetime({ precision: 3 });
const origins = z
  .array(z.string())
  .max(MAX_ALLOWED_ORIGINS)
  .meta({ description: 'Browser origins, https://host[:port] (http:// only for localhost); at least one.' });

export const publishableKeySchema = z.object({
  id: z.uuid(),
  name: z.string(),
  prefix: z.string(),
  livemode: z.boolean(),
  allowedOrigins: z.array(z.string()),
  hourlyLimit: z.number().int(),
  createdAt: timestamp,
  lastUsedAt: timestamp.nullable(),
  revokedAt: timestamp.nullable(),
});
export const publishableKeyListSchema = z.object({ ok: z.literal(true), keys: z.array(publishableKeySchema) });

export const createPublishableKeyBody = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  sandbox: z
    .boolean()
    .default(false)
    .meta({ description: 'true: a `li_pub_test_…` key whose leads are sandbox leads.' }),
  allowedOrigins: origins,
});
export const publishableKeyCreatedSchema = z.object({
  ok: z.literal(true),
  key: z.object({
    id: z.uuid(),
    prefix: z.string(),
    key: z.string().meta({ description: 'The key: shown this once (only its hash is stored).' }),
    allowedOrigins: z.array(z.string()),
  }),
});
export const setOriginsBody = z.object({ allowedOrigins: origins });
