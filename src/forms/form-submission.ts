import { numberRange } from '../agent/qualification-answers.ts';
import { parseLeadSubmission } from '../leads/lead-submission.ts';
import { AppError } from '../shared/errors.ts';
import type { QualificationQuestion } from '../workspaces/agent-config.ts';
import type { FormSettings } from '../workspaces/form-settings.ts';
import { translatedApiMessage, type FormStrings } from './form-strings.ts';

// A POSTed form read into the public API's body, and checked the way the API checks it
// (parseLeadSubmission: the same rules and messages, per field) plus what only the form knows:
// an e-mail the workspace requires, and the builder's questions (required, one of the options, a
// number in range). The answers go as `formResponses`, by question id, so the agent treats them as
// answers already given.

export interface ReadForm {
  /** The body LeadService.submit takes (as JSON text). */
  body: Record<string, unknown>;
  /** What the lead typed, to render the form again. */
  values: Record<string, string>;
  /** Field name → message; empty when the submission passes. */
  errors: Record<string, string>;
}

const EMAIL_MESSAGE = 'Email must be a valid e-mail address.';

const field = (form: URLSearchParams, name: string) => (form.get(name) ?? '').slice(0, 5000);

export function readForm(
  form: URLSearchParams,
  settings: FormSettings,
  questions: QualificationQuestion[],
  strings: FormStrings,
  defaultCountry: string | undefined,
): ReadForm {
  const values: Record<string, string> = { name: field(form, 'name'), phone: field(form, 'phone') };
  if (settings.email !== 'hidden') values.email = field(form, 'email').trim();
  if (settings.showGoal) values.goal = field(form, 'goal');
  if (form.get('consent') === 'yes') values.consent = 'yes';
  const formResponses: Record<string, string> = {};
  for (const q of questions) {
    values[q.id] = field(form, q.id).trim();
    if (values[q.id]) formResponses[q.id] = values[q.id]!;
  }
  const body: Record<string, unknown> = {
    name: values.name,
    phone: values.phone,
    consent: values.consent === 'yes',
    ...(values.email ? { email: values.email } : {}),
    ...(values.goal?.trim() ? { goal: values.goal } : {}),
    ...(Object.keys(formResponses).length ? { formResponses } : {}),
  };
  const errors: Record<string, string> = {};
  try {
    parseLeadSubmission(body, defaultCountry);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.code === 'consent_required') errors.consent = strings.consentRequired;
    for (const issue of err.details.issues ?? []) {
      const name = issue.path[0] === 'formResponses' ? issue.path[1] : issue.path[0];
      if (!name || errors[name]) continue;
      // zod's own wording ("Invalid string: must match pattern …") leaks through the API for a
      // malformed e-mail; a person gets the field's sentence instead.
      const message = issue.message.startsWith('Invalid') && name === 'email' ? EMAIL_MESSAGE : issue.message;
      errors[name] = name === 'consent' ? strings.consentRequired : translatedApiMessage(strings, message);
    }
  }
  if (settings.email === 'required' && !values.email && !errors.email) errors.email = strings.emailRequired;
  for (const q of questions) {
    const problem = questionProblem(q, values[q.id] ?? '', strings);
    if (problem && !errors[q.id]) errors[q.id] = problem;
  }
  return { body, values, errors };
}

function questionProblem(q: QualificationQuestion, answer: string, s: FormStrings): string | null {
  if (answer === '') return q.required ? s.required : null;
  if (q.type === 'choice' && !(q.options ?? []).includes(answer)) return s.chooseOption;
  if (q.type === 'number') {
    // A comma is a decimal point in German.
    const n = Number(answer.replace(',', '.'));
    if (!Number.isFinite(n)) return s.numberNeeded;
    const { min, max } = numberRange(q);
    if (n < min || n > max) return s.numberRange(min, max === Number.MAX_SAFE_INTEGER ? null : max);
  }
  return null;
}
