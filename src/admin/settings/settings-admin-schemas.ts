import { z } from 'zod';

// Requests and responses of the Providers and API keys pages (docs/DASHBOARD.md,
// "Providers, API keys and team"); the Team page's are in team/.

const timestamp = z.iso.datetime({ precision: 3 });
const section = z.record(z.string(), z.unknown());

// Providers ------------------------------------------------------------------------------------

export const providerParams = z.object({
  slug: z.string().meta({ description: 'The workspace.' }),
  provider: z
    .enum(['voice', 'whatsapp', 'scheduling', 'llm'])
    .meta({ description: 'The section of the workspace config.' }),
});
export const providerBody = z.record(z.string(), z.unknown()).meta({
  description:
    'The section as in the workspace config file (docs/WORKSPACE-CONFIG.md). ' +
    'A secret left out or sent as "" keeps the stored one; null removes an optional one.',
});

const maskedSecret = z.object({
  set: z.literal(true),
  last4: z
    .string()
    .nullable()
    .meta({ description: 'The last 4 characters (secrets of 12 characters or more), else null.' }),
});
export const providersSchema = z.object({
  ok: z.literal(true),
  channel: z.enum(['voice', 'whatsapp']),
  providers: z
    .object({
      voice: section.nullable(),
      whatsapp: section.nullable(),
      scheduling: section.nullable(),
      llm: section.nullable(),
    })
    .meta({
      description: 'Each configured section with every secret replaced by `{set, last4}`; null when not configured.',
    }),
  secretFields: z
    .record(z.string(), z.array(z.string()))
    .meta({ description: 'The write-only fields of each section (`whatsapp:twilio`, `whatsapp:meta`).' }),
  voiceAuth: z.enum(['secret', 'hmac']).nullable(),
  urls: z.array(z.object({ provider: z.string(), label: z.string(), url: z.string(), note: z.string() })),
  publicBaseUrl: z.string(),
  warning: z.string().nullable().meta({ description: 'Set when PUBLIC_BASE_URL is not a public https address.' }),
  sandboxOnly: z
    .boolean()
    .meta({ description: 'No live key and no live lead: every lead so far reached simulated providers.' }),
});
export { maskedSecret };

const verifyLine = z.object({ provider: z.string(), check: z.string(), ok: z.boolean(), note: z.string() });
export const providerTestSchema = z.object({
  ok: z.literal(true),
  passed: z.boolean().meta({ description: 'No check failed.' }),
  checks: z.array(verifyLine),
  notConfigured: z.array(z.object({ section: z.string(), required: z.boolean(), note: z.string() })),
});

// API keys -------------------------------------------------------------------------------------

export const createKeyBody = z.object({
  name: z.string().trim().min(1).max(100),
  sandbox: z.boolean().default(false).meta({ description: 'true: a `li_test_…` key whose leads are sandbox leads.' }),
  hourlyLimit: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .meta({ description: "Default: DEFAULT_HOURLY_LIMIT. At most the installation's MAX_KEY_HOURLY_LIMIT, else 400." }),
});
export const keySchema = z.object({
  id: z.uuid(),
  name: z.string(),
  prefix: z.string(),
  livemode: z.boolean(),
  hourlyLimit: z.number().int(),
  createdAt: timestamp,
  lastUsedAt: timestamp.nullable().meta({ description: 'Recorded at most once a minute per key.' }),
  revokedAt: timestamp.nullable(),
});
export const keyListSchema = z.object({
  ok: z.literal(true),
  keys: z.array(keySchema),
  cacheTtlSeconds: z
    .number()
    .meta({ description: 'API_KEY_CACHE_TTL_MS in seconds: how long other processes may still accept a revoked key.' }),
});
export const keyCreatedSchema = z.object({
  ok: z.literal(true),
  key: z.object({
    id: z.uuid(),
    prefix: z.string(),
    key: z.string().meta({ description: 'The key: shown this once, never again (only its hash is stored).' }),
  }),
});
