import { z } from 'zod';
import { AppError, type ValidationIssue } from '../shared/errors.ts';
import { isValidPhone, PHONE_MESSAGE } from './phone.ts';

const codePoints = (s: string) => [...s].length;

// Optional fields also accept null (and '' for the text fields) as "not given": forms
// commonly send blank fields. Unions instead of preprocessing keep the schema expressible
// in the generated OpenAPI document.
const blank = z.union([z.null(), z.literal('')]);

/** The body of POST /api/public/leads (spec 2.1), minus `consent`, which has its own error. */
export const leadSubmissionSchema = z.object({
  name: z
    .string({ error: 'Name must be a string.' })
    .refine((s) => codePoints(s) >= 1 && codePoints(s) <= 120 && s.trim() !== '', 'Name must be 1 to 120 characters.'),
  phone: z.string({ error: PHONE_MESSAGE }).refine(isValidPhone, PHONE_MESSAGE),
  email: z
    .union([blank, z.string().max(254).regex(z.regexes.rfc5322Email)], { error: 'Email must be a valid e-mail address.' })
    .optional(),
  goal: z
    .union([blank, z.string().refine((s) => codePoints(s) <= 2000)], { error: 'Goal must be a string of at most 2000 characters.' })
    .optional(),
  metadata: z
    .union([z.null(), z.record(z.string(), z.json())], { error: 'Metadata must be an object.' })
    .optional(),
  formResponses: z
    .union([z.null(), z.record(z.string(), z.string())], { error: 'formResponses must be an object of strings.' })
    .optional(),
});

/** The schema published in the OpenAPI document: the above plus `consent`. */
export const leadSubmissionDocSchema = leadSubmissionSchema.extend({ consent: z.literal(true) });

type ParsedBody = z.output<typeof leadSubmissionSchema>;

export interface LeadSubmission {
  name: string;
  phone: string;
  email?: string;
  goal?: string;
  metadata?: Record<string, unknown>;
  formResponses?: Record<string, string>;
}

function normalise(p: ParsedBody): LeadSubmission {
  return {
    name: p.name,
    phone: p.phone,
    ...(p.email ? { email: p.email } : {}),
    ...(p.goal ? { goal: p.goal } : {}),
    ...(p.metadata ? { metadata: p.metadata as Record<string, unknown> } : {}),
    ...(p.formResponses ? { formResponses: p.formResponses } : {}),
  };
}

export const CONSENT_MESSAGE = '`consent` must be true.';

/**
 * Validates a parsed JSON body. Every bad field is listed in `issues`; when consent is the
 * only problem the answer is the spec's dedicated consent error.
 */
export function parseLeadSubmission(body: unknown): LeadSubmission {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('validation_failed', { issues: [{ path: [], message: 'The body must be a JSON object.' }] });
  }
  const consentOk = (body as { consent?: unknown }).consent === true;
  const nul = storageIssues(body as Record<string, unknown>);
  // zod validates JSON values recursively: a field nested deeper than we store is left out of
  // its input (it has its issue already) so that it cannot exhaust the stack.
  const tooDeep = new Set(nul.filter((i) => i.message === DEPTH_MESSAGE).map((i) => i.path[0]!));
  const result = leadSubmissionSchema.safeParse(tooDeep.size ? { ...body, ...Object.fromEntries([...tooDeep].map((f) => [f, null])) } : body);
  if (result.success && nul.length === 0 && consentOk) return normalise(result.data);
  if (result.success && nul.length === 0) throw new AppError('consent_required');
  const issues: ValidationIssue[] = result.success ? [] : result.error.issues.map((i) => ({ path: i.path.map(String), message: i.message }));
  issues.push(...nul);
  if (!consentOk) issues.push({ path: ['consent'], message: CONSENT_MESSAGE });
  throw new AppError('validation_failed', { issues });
}

export const NUL_MESSAGE = 'Text must not contain the NUL character (\\u0000).';

export const MAX_DEPTH = 32;
export const DEPTH_MESSAGE = `Must not be nested more than ${MAX_DEPTH} levels deep.`;

/**
 * What the database could not store, as validation issues instead of failures there:
 * PostgreSQL's text and jsonb cannot hold U+0000 (reported at every path, keys included, that
 * has one), and values nested deeper than MAX_DEPTH (reported once, at the field).
 */
function storageIssues(body: Record<string, unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const walk = (value: unknown, path: string[]): void => {
    // `path.length` is the container's level: the field itself (metadata) is level 1.
    if (typeof value === 'object' && value !== null && path.length > MAX_DEPTH) {
      if (!issues.some((i) => i.path[0] === path[0] && i.message === DEPTH_MESSAGE)) issues.push({ path: [path[0]!], message: DEPTH_MESSAGE });
    } else if (typeof value === 'string') {
      if (value.includes('\u0000')) issues.push({ path, message: NUL_MESSAGE });
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, [...path, String(i)]));
    } else if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value)) {
        if (k.includes('\u0000')) issues.push({ path: [...path, k], message: NUL_MESSAGE });
        walk(v, [...path, k]);
      }
    }
  };
  for (const field of Object.keys(leadSubmissionSchema.shape)) walk(body[field], [field]);
  return issues;
}
