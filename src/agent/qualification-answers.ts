import type { QualificationQuestion } from '../workspaces/agent-config.ts';

// What the lead has answered so far, from two sources: the form (form_responses, as sent) and
// the agent (answers). The agent's answer wins: it is the later one.

export interface AnswerSources {
  formResponses: Record<string, string>;
  answers: Record<string, string>;
}

export interface QualificationState {
  /** Questions of the form with an answer, in form order. */
  answered: Array<{ question: QualificationQuestion; answer: string }>;
  /** Answers to ids the form no longer has (a deleted question): kept, shown by id. */
  orphaned: Array<{ id: string; answer: string }>;
  /** Questions of the form without an answer, in form order. */
  open: QualificationQuestion[];
}

export function qualificationState(
  questions: readonly QualificationQuestion[],
  lead: AnswerSources,
): QualificationState {
  const merged = new Map<string, string>();
  for (const [id, answer] of [...Object.entries(lead.formResponses), ...Object.entries(lead.answers)]) {
    // A blank form field is no answer.
    if (typeof answer === 'string' && answer.trim() !== '') merged.set(id, answer.trim());
  }
  const known = new Set(questions.map((q) => q.id));
  return {
    answered: questions.flatMap((question) => {
      const answer = merged.get(question.id);
      return answer === undefined ? [] : [{ question, answer }];
    }),
    orphaned: [...merged].filter(([id]) => !known.has(id)).map(([id, answer]) => ({ id, answer })),
    open: questions.filter((q) => !merged.has(q.id)),
  };
}

/** The range a number answer must fall in: the form's, else 0 and up (a bill or a size is never negative). */
export function numberRange(q: QualificationQuestion): { min: number; max: number } {
  return { min: q.min ?? 0, max: q.max ?? Number.MAX_SAFE_INTEGER };
}

/** The range is spelled out only when the form sets one; the default (0 and up) goes without saying. */
function describeRange(q: QualificationQuestion): string {
  if (q.min === undefined && q.max === undefined) return 'a number';
  const { min, max } = numberRange(q);
  return max === Number.MAX_SAFE_INTEGER ? `a number, at least ${min}` : `a number from ${min} to ${max}`;
}

/** `q_abc: Do you own the property? (required; one of: Yes, No)`, as the agent needs it to ask and save. */
export function describeQuestion(q: QualificationQuestion): string {
  const kind =
    q.type === 'choice'
      ? `one of: ${(q.options ?? []).join(', ')}`
      : q.type === 'number'
        ? describeRange(q)
        : 'free text';
  return `${q.id}: ${q.label} (${q.required ? 'required' : 'optional'}; ${kind})`;
}
