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
  const result = leadSubmissionSchema.safeParse(body);
  const nul = nulIssues(body as Record<string, unknown>);
  if (result.success && nul.length === 0 && consentOk) return normalise(result.data);
  if (result.success && nul.length === 0) throw new AppError('consent_required');
  const issues: ValidationIssue[] = result.success ? [] : result.error.issues.map((i) => ({ path: i.path.map(String), message: i.message }));
  issues.push(...nul);
  if (!consentOk) issues.push({ path: ['consent'], message: CONSENT_MESSAGE });
  throw new AppError('validation_failed', { issues });
}

export const NUL_MESSAGE = 'Text must not contain the NUL character (\\u0000).';

/**
 * PostgreSQL's text and jsonb cannot store U+0000, so a value holding it would fail at the
 * database: it is a validation error instead, reported at every path (keys included) that has one.
 */
function nulIssues(body: Record<string, unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const walk = (value: unknown, path: string[]): void => {
    if (typeof value === 'string') {
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
