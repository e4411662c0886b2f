import { z } from 'zod';
import { charsOf, METADATA_BLOCK_MAX_CHARS, metadataLines } from '../agent/lead-data-block.ts';
import { AppError, type ValidationIssue } from '../shared/errors.ts';
import { validationIssues } from '../shared/schema-parse.ts';
import { isStorableText } from '../shared/storable-text.ts';
import { METADATA_KEY_MAX_CHARS, METADATA_VALUE_MAX_CHARS, metadataPairs } from './metadata-render.ts';
import { isPhoneShaped, normalizePhone, PHONE_JSON_SCHEMA, PHONE_MESSAGE } from './phone.ts';

const codePoints = (s: string) => [...s].length;

// Optional fields also accept null (and '' for the text fields) as "not given": forms
// commonly send blank fields. Unions instead of preprocessing keep the schema expressible
// in the generated OpenAPI document.
/** Any JSON value; one instance, so the OpenAPI document names it once (`JsonValue`). */
export const jsonValueSchema = z.json();

const blank = z.union([z.null(), z.literal('')]);

/** The body of POST /api/public/leads (docs/API.md), minus `consent`, which has its own error. */
export const GOAL_MAX_CHARS = 2000;

export const leadSubmissionSchema = z.object({
  name: z
    .string({ error: 'Name must be a string.' })
    .refine((s) => codePoints(s) >= 1 && codePoints(s) <= 120 && s.trim() !== '', 'Name must be 1 to 120 characters.')
    // JSON Schema counts lengths in code points, as the check above does.
    .meta({ minLength: 1, maxLength: 120, examples: ['Ada Lovelace'] }),
  // Whether it is a possible number depends on the workspace's default country: parseLeadSubmission.
  phone: z
    .string({ error: PHONE_MESSAGE })
    .refine(isPhoneShaped, PHONE_MESSAGE)
    .meta({
      ...PHONE_JSON_SCHEMA,
      description:
        'Digits with an optional leading +, spaces, dashes, dots and parentheses; it must be a possible number ' +
        "(international, or national in the workspace's default country).",
      examples: ['+44 20 7946 0958'],
    }),
  email: z
    .union([blank, z.string().max(254).regex(z.regexes.rfc5322Email).meta({ format: 'email' })], {
      error: 'Email must be a valid e-mail address.',
    })
    .optional(),
  goal: z
    .union(
      [
        blank,
        z
          .string()
          .refine((s) => codePoints(s) <= GOAL_MAX_CHARS)
          .meta({ maxLength: GOAL_MAX_CHARS }),
      ],
      { error: `Goal must be a string of at most ${GOAL_MAX_CHARS} characters.` },
    )
    .optional(),
  metadata: z
    .union([z.null(), z.record(z.string(), jsonValueSchema)], { error: 'Metadata must be an object.' })
    .optional()
    .meta({
      description:
        'Free-form; every pair is given to the agent, except those whose value is null or "": ' +
        'those are stored and read back as sent, and only left out of the prompt. ' +
        `Keys at most ${METADATA_KEY_MAX_CHARS} characters, values at most ${METADATA_VALUE_MAX_CHARS} ` +
        '(a value that is not a string counts as its JSON text), and at most ' +
        `${METADATA_BLOCK_MAX_CHARS} characters in total as the agent is shown them ` +
        '(one `- "key": value` line per pair, strings JSON-quoted; docs/API.md). At most 32 levels deep.',
    }),
  formResponses: z
    .union([z.null(), z.record(z.string(), z.string())], { error: 'formResponses must be an object of strings.' })
    .optional()
    .meta({
      description:
        "Voice workspaces: answers by question id from the workspace's form; the agent asks for the rest on the call.",
    }),
});

/** The schema published in the OpenAPI document: the above plus `consent`. */
export const leadSubmissionDocSchema = leadSubmissionSchema
  .extend({
    consent: z.literal(true).meta({ description: 'The lead agreed to be contacted: must be the literal `true`.' }),
  })
  .meta({
    description:
      'Text fields (name, phone, email, goal) must not contain U+0000. ' +
      'Blank optional fields (null or "") count as not given.',
    examples: [
      {
        name: 'Ada Lovelace',
        phone: '+44 20 7946 0958',
        consent: true,
        email: 'ada@example.com',
        goal: 'More qualified leads',
        metadata: { source: 'pricing-page' },
      },
    ],
  });

type ParsedBody = z.output<typeof leadSubmissionSchema>;

export interface LeadSubmission {
  name: string;
  /** As submitted (GET returns it so). */
  phone: string;
  /** E.164: what uniqueness, calls and messages use. */
  phoneNormalized: string;
  email?: string;
  goal?: string;
  metadata?: Record<string, unknown>;
  formResponses?: Record<string, string>;
}

function normalise(p: ParsedBody, phoneNormalized: string): LeadSubmission {
  return {
    name: p.name,
    phone: p.phone,
    phoneNormalized,
    ...(p.email ? { email: p.email } : {}),
    ...(p.goal ? { goal: p.goal } : {}),
    ...(p.metadata ? { metadata: p.metadata as Record<string, unknown> } : {}),
    ...(p.formResponses ? { formResponses: p.formResponses } : {}),
  };
}

export const CONSENT_MESSAGE = '`consent` must be true.';

/**
 * Validates a parsed JSON body. Every bad field is listed in `issues`; when consent is the
 * only problem the answer is the API's dedicated consent error. A phone in national format is
 * completed with `defaultCountry` (the workspace's `agent.defaultCountry`).
 */
export function parseLeadSubmission(body: unknown, defaultCountry?: string): LeadSubmission {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('validation_failed', { issues: [{ path: [], message: 'The body must be a JSON object.' }] });
  }
  const consentOk = (body as { consent?: unknown }).consent === true;
  const nul = storageIssues(body as Record<string, unknown>);
  // zod validates JSON values recursively: a field nested deeper than we store is left out of
  // its input (it has its issue already) so that it cannot exhaust the stack.
  const tooDeep = new Set(nul.filter((i) => i.message === DEPTH_MESSAGE).map((i) => i.path[0]!));
  const result = leadSubmissionSchema.safeParse(
    tooDeep.size ? { ...body, ...Object.fromEntries([...tooDeep].map((f) => [f, null])) } : body,
  );
  const phone = (body as { phone?: unknown }).phone;
  const e164 = typeof phone === 'string' ? normalizePhone(phone, defaultCountry) : null;
  // The schema reports a malformed phone; one that is well formed but no possible number, here.
  const other = [
    ...nul,
    ...(typeof phone === 'string' && isPhoneShaped(phone) && e164 === null
      ? [{ path: ['phone'], message: PHONE_MESSAGE }]
      : []),
    ...(tooDeep.has('metadata') ? [] : metadataIssues((body as { metadata?: unknown }).metadata)),
  ];
  if (result.success && other.length === 0 && consentOk) return normalise(result.data, e164!);
  if (result.success && other.length === 0) throw new AppError('consent_required');
  // Not parse(): the schema's issues join the storage, phone and consent ones in one answer (or
  // consent_required alone), so only the issue mapping is shared.
  const issues = [...(result.success ? [] : validationIssues(result.error)), ...other];
  if (!consentOk) issues.push({ path: ['consent'], message: CONSENT_MESSAGE });
  throw new AppError('validation_failed', { issues });
}

/**
 * The body of POST /api/public/leads as received: text read as JSON whatever the Content-Type
 * says (a client that forgets the JSON header keeps its lead), then validated as above.
 */
export function parseLeadBody(body: unknown, defaultCountry?: string): LeadSubmission {
  if (typeof body !== 'string' || body.trim() === '') throw new AppError('invalid_json');
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new AppError('invalid_json');
  }
  return parseLeadSubmission(parsed, defaultCountry);
}

export const NUL_MESSAGE = 'Text must not contain the NUL character (\\u0000).';
export const SURROGATE_MESSAGE =
  'Text must be valid Unicode: a lone UTF-16 surrogate (\\uD800 to \\uDFFF without its pair) cannot be stored.';

/** The issue for a string PostgreSQL cannot store (src/shared/storable-text.ts), or null. */
function textIssue(s: string): string | null {
  if (isStorableText(s)) return null;
  return s.includes('\u0000') ? NUL_MESSAGE : SURROGATE_MESSAGE;
}

export const METADATA_KEY_MESSAGE = `Metadata keys must be at most ${METADATA_KEY_MAX_CHARS} characters.`;
export const METADATA_VALUE_MESSAGE =
  `Metadata values must be at most ${METADATA_VALUE_MAX_CHARS} characters ` +
  '(a value that is not a string counts as its JSON text).';
export const METADATA_SIZE_MESSAGE =
  `Metadata must be at most ${METADATA_BLOCK_MAX_CHARS} characters in total as the agent is shown it ` +
  '(one `- "key": value` line per pair, strings JSON-quoted).';

/**
 * Metadata the agent could not be shown whole (the specification: every pair is rendered into the
 * prompt; it leaves the maximum size open): a key or a value longer than both channels show
 * (metadata-render.ts), reported at the pair, or pairs that together exceed the lead-data block's
 * share for metadata (src/agent/lead-data-block.ts, measured by the block's own rendering), reported
 * at the field. Pairs left out of the prompt (null or "") are not limited.
 */
function metadataIssues(metadata: unknown): ValidationIssue[] {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return [];
  const record = metadata as Record<string, unknown>;
  const issues: ValidationIssue[] = [];
  for (const [key, text] of metadataPairs(record)) {
    if (codePoints(key) > METADATA_KEY_MAX_CHARS)
      issues.push({ path: ['metadata', key], message: METADATA_KEY_MESSAGE });
    if (codePoints(text) > METADATA_VALUE_MAX_CHARS)
      issues.push({ path: ['metadata', key], message: METADATA_VALUE_MESSAGE });
  }
  if (charsOf(metadataLines(record)) > METADATA_BLOCK_MAX_CHARS)
    issues.push({ path: ['metadata'], message: METADATA_SIZE_MESSAGE });
  return issues;
}

/**
 * A lead we mapped ourselves from a source's fields (a webhook's, a lead form's answers:
 * src/intake/intake-service.ts), cut to what the API accepts: there the lead matters more than a
 * long message, so it is kept, not refused. The goal is cut to GOAL_MAX_CHARS, the metadata as
 * fitMetadata says.
 */
export function fitMappedLead<T extends { goal?: string; metadata?: Record<string, unknown> }>(body: T): T {
  const goal = body.goal === undefined ? undefined : [...body.goal].slice(0, GOAL_MAX_CHARS).join('');
  return { ...body, ...(goal !== undefined ? { goal } : {}), metadata: fitMetadata(body.metadata) };
}

/**
 * Metadata cut to what metadataIssues accepts: a key over the limit is dropped, a value over it
 * cut (one that is not a string is kept as its cut JSON text), and pairs past the total share left
 * out, in their order.
 */
export function fitMetadata(metadata: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!metadata) return metadata;
  const fitted: Record<string, unknown> = {};
  for (const [key, text] of metadataPairs(metadata)) {
    if (codePoints(key) > METADATA_KEY_MAX_CHARS) continue;
    const value = metadata[key];
    const cut =
      codePoints(text) > METADATA_VALUE_MAX_CHARS ? [...text].slice(0, METADATA_VALUE_MAX_CHARS).join('') : null;
    const next = { ...fitted, [key]: cut ?? value };
    if (charsOf(metadataLines(next)) > METADATA_BLOCK_MAX_CHARS) break;
    fitted[key] = cut ?? value;
  }
  return fitted;
}

export const MAX_DEPTH = 32;
export const DEPTH_MESSAGE = `Must not be nested more than ${MAX_DEPTH} levels deep.`;

/**
 * What the database could not store, as validation issues instead of failures there:
 * PostgreSQL's text and jsonb cannot hold U+0000 nor (jsonb) a lone UTF-16 surrogate (reported
 * at every path, keys included, that has one), and values nested deeper than MAX_DEPTH
 * (reported once, at the field).
 */
function storageIssues(body: Record<string, unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const walk = (value: unknown, path: string[]): void => {
    // `path.length` is the container's level: the field itself (metadata) is level 1.
    if (typeof value === 'object' && value !== null && path.length > MAX_DEPTH) {
      if (!issues.some((i) => i.path[0] === path[0] && i.message === DEPTH_MESSAGE))
        issues.push({ path: [path[0]!], message: DEPTH_MESSAGE });
    } else if (typeof value === 'string') {
      const message = textIssue(value);
      if (message) issues.push({ path, message });
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, [...path, String(i)]));
    } else if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value)) {
        const message = textIssue(k);
        if (message) issues.push({ path: [...path, k], message });
        walk(v, [...path, k]);
      }
    }
  };
  for (const field of Object.keys(leadSubmissionSchema.shape)) walk(body[field], [field]);
  return issues;
}
