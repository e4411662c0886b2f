import crypto from 'node:crypto';
import { z } from 'zod';
import { isPhoneCountry } from '../shared/phone-country.ts';
import { isValidTimeZone } from '../shared/zoned-time.ts';
import { contactPlanSchema } from './contact-plan-config.ts';

// The `agent` section of the workspace config file (docs/WORKSPACE-CONFIG.md): who the agent
// is, what qualifies a lead, the workspace's time zone and phone country, and the ordered
// questions of its qualification form. Stored in clear in `workspaces.agent`: none of it is secret.
// Part of the workspace (saved by WorkspaceService, read with the row), so it lives here and the
// agent, both channels and the dashboard read it from here.

const QUESTION_ID = /^q_[A-Za-z0-9_-]{1,60}$/;
// Intl also accepts offsets such as "+01:00"; Cal.com and people expect IANA names.
const IANA_SHAPE = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

const requiredText = (what: string, max: number) =>
  z
    .string({ error: `${what} must be a string` })
    .trim()
    .min(1, `${what} is required`)
    .max(max, `${what} must be at most ${max} characters`);

// A host name such as example.com (lower-cased; a scheme, path or leading "www." is taken off).
const linkDomain = z
  .string({ error: 'a link domain must be a string' })
  .trim()
  .toLowerCase()
  .transform((d) =>
    d
      .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
      .replace(/[/?#].*$/, '')
      .replace(/^www\./, '')
      .replace(/\.$/, ''),
  )
  .refine(
    (d) => /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(d),
    'a link domain is a host name such as example.com',
  );

export const qualificationQuestionSchema = z
  .object({
    id: z.string().regex(QUESTION_ID, 'a question id is q_ followed by letters, digits, _ or -').optional(),
    label: requiredText('label', 300),
    type: z.enum(['text', 'choice', 'number']),
    options: z.array(requiredText('option', 200)).max(50).optional(),
    required: z.boolean().default(false),
    // The range a number answer must fall in (both ends included); without `min`, 0: amounts,
    // counts and sizes are never negative unless the form says so.
    min: z.number({ error: 'min must be a number' }).finite().optional(),
    max: z.number({ error: 'max must be a number' }).finite().optional(),
  })
  .strict()
  .superRefine((q, ctx) => {
    if (q.type !== 'number' && (q.min !== undefined || q.max !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['min'], message: 'min and max are only for number questions' });
    }
    if (q.min !== undefined && q.max !== undefined && q.min > q.max) {
      ctx.addIssue({ code: 'custom', path: ['max'], message: 'max must not be less than min' });
    }
    if (q.type === 'choice' && (q.options?.length ?? 0) < 2) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'a choice question needs at least two options' });
    }
    if (q.type !== 'choice' && q.options !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'options are only for choice questions' });
    }
    if (q.options && duplicates(q.options.map(fold)).length > 0) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'options must be different from each other' });
    }
  });

export const agentConfigSchema = z
  .object({
    persona: z
      .object({
        agentName: requiredText('persona.agentName', 80),
        company: requiredText('persona.company', 120),
        offer: requiredText('persona.offer', 1000),
        tone: requiredText('persona.tone', 300),
      })
      .strict(),
    criteria: z.string().trim().max(4000).default(''),
    timeZone: z
      .string()
      .refine(
        (tz) => IANA_SHAPE.test(tz) && isValidTimeZone(tz),
        'timeZone must be an IANA time zone such as Europe/Berlin',
      )
      .transform(canonicalTimeZone),
    // Completes phone numbers a form sends in national format ("030 2345 6789" → +49 30 2345 6789).
    defaultCountry: z
      .string()
      .transform((c) => c.trim().toUpperCase())
      .refine(isPhoneCountry, 'defaultCountry must be an ISO 3166-1 alpha-2 country code such as DE')
      .optional(),
    questions: z.array(qualificationQuestionSchema).max(50).default([]),
    // What a lead hears on WhatsApp when the agent hands it to a person without an answer
    // (src/whatsapp/hand-over.ts); unset: "Thanks — a colleague will reply shortly."
    holdingMessage: requiredText('holdingMessage', 500).optional(),
    // The only domains (and their subdomains) the agent's WhatsApp messages may link to; other
    // links are removed before a message is sent (src/agent/outbound-guard.ts). Empty: no links.
    allowedLinkDomains: z.array(linkDomain).max(20, 'at most 20 link domains').optional(),
    // Follow-ups: retries, nudges, the calling window (contact-plan-config.ts); absent: the defaults.
    contactPlan: contactPlanSchema.optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    for (const id of duplicates(a.questions.flatMap((q) => (q.id ? [q.id] : [])))) {
      ctx.addIssue({ code: 'custom', path: ['questions'], message: `question id ${id} is used twice` });
    }
    // Labels identify questions that come without an id (see withQuestionIds).
    for (const label of duplicates(a.questions.map((q) => fold(q.label)))) {
      ctx.addIssue({ code: 'custom', path: ['questions'], message: `two questions are labelled "${label}"` });
    }
  });

/** As read from a config file: question ids may be missing. */
export type AgentConfigInput = z.output<typeof agentConfigSchema>;
export type QuestionType = 'text' | 'choice' | 'number';

export interface QualificationQuestion {
  id: string;
  label: string;
  type: QuestionType;
  options?: string[];
  required: boolean;
  /** Number questions: the smallest and largest answer accepted (numberRange in qualification-answers.ts). */
  min?: number;
  max?: number;
}

/** A question taken off the form: its id and the label it had, so old answers stay readable. */
export interface RetiredQuestion {
  id: string;
  label: string;
}

/** As stored and used: every question has its id. */
export interface AgentConfig extends Omit<AgentConfigInput, 'questions'> {
  questions: QualificationQuestion[];
  /** Questions removed from the form (never in a config file: kept by withQuestionIds). */
  retiredQuestions?: RetiredQuestion[];
}

/**
 * Gives every question an id: a given id is kept; a question without one takes the id of the
 * stored question with the same label (so re-applying an edited config file does not orphan
 * the answers and form fields already using that id); otherwise a new `q_` + base62 id.
 */
export function withQuestionIds(input: AgentConfigInput, previous: AgentConfig | null): AgentConfig {
  const taken = new Set(input.questions.flatMap((q) => (q.id ? [q.id] : [])));
  const byLabel = new Map((previous?.questions ?? []).map((q) => [fold(q.label), q.id]));
  const questions = input.questions.map((q): QualificationQuestion => {
    let id = q.id;
    if (!id) {
      const reused = byLabel.get(fold(q.label));
      id = reused && !taken.has(reused) ? reused : newQuestionId(taken);
      taken.add(id);
    }
    return {
      id,
      label: q.label,
      type: q.type,
      ...(q.options ? { options: q.options } : {}),
      required: q.required,
      ...(q.min !== undefined ? { min: q.min } : {}),
      ...(q.max !== undefined ? { max: q.max } : {}),
    };
  });
  const retiredQuestions = retire(previous, questions);
  return { ...input, questions, ...(retiredQuestions.length > 0 ? { retiredQuestions } : {}) };
}

/**
 * The questions no longer on the form, with the label each had when it was removed: the ones
 * retired before plus the previous questions the new list drops (an id back on the form leaves
 * the list). Leads keep their answers by id; the lead page shows them under these labels.
 */
export function retire(previous: AgentConfig | null, questions: readonly QualificationQuestion[]): RetiredQuestion[] {
  const current = new Set(questions.map((q) => q.id));
  const retired = new Map<string, string>();
  for (const r of previous?.retiredQuestions ?? []) retired.set(r.id, r.label);
  for (const q of previous?.questions ?? []) if (!current.has(q.id)) retired.set(q.id, q.label);
  return [...retired].filter(([id]) => !current.has(id)).map(([id, label]) => ({ id, label }));
}

/** `workspaces.agent` as read from the database; `{}` means not configured. */
export function agentFromColumn(value: unknown): AgentConfig | null {
  if (typeof value !== 'object' || value === null || Object.keys(value).length === 0) return null;
  // Written only by WorkspaceService after validation against agentConfigSchema.
  return value as AgentConfig;
}

/** What the agent runs with until the workspace is configured: no questions, UTC. */
export function defaultAgentConfig(workspaceName: string): AgentConfig {
  return {
    persona: {
      agentName: 'Alex',
      company: workspaceName,
      offer: 'a free, no-obligation consultation',
      tone: 'friendly, clear and brief',
    },
    criteria: '',
    timeZone: 'UTC',
    questions: [],
  };
}

export function agentConfigOf(workspace: { name: string; agent: AgentConfig | null }): AgentConfig {
  return workspace.agent ?? defaultAgentConfig(workspace.name);
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function newQuestionId(taken: ReadonlySet<string>): string {
  for (;;) {
    // 62 * 4 = 248: bytes at or above it are skipped, so every character is equally likely.
    const chars = [...crypto.randomBytes(24)].filter((b) => b < 248).slice(0, 12);
    if (chars.length < 12) continue;
    const id = `q_${chars.map((b) => BASE62[b % 62]).join('')}`;
    if (!taken.has(id)) return id;
  }
}

function canonicalTimeZone(tz: string): string {
  return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
}

function fold(text: string): string {
  return text.trim().toLowerCase();
}

function duplicates(values: string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const v of values) {
    if (seen.has(v)) repeated.add(v);
    seen.add(v);
  }
  return [...repeated];
}
