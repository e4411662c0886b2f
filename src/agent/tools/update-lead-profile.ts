import { z } from 'zod';
import { agentConfigOf, type QualificationQuestion } from '../../workspaces/agent-config.ts';
import { saveLeadProfile } from '../agent-lead-queries.ts';
import { describeQuestion, numberRange, qualificationState } from '../qualification-answers.ts';
import { defineTool, loadActiveLead, refusalAnswer } from './tool-context.ts';

const NUMBER = /^-?\d+(\.\d+)?$/;

export const updateLeadProfile = defineTool({
  name: 'updateLeadProfile',
  description:
    "Save the lead's answers to the qualification questions (by question id) and free notes for the team. " +
    'Call it as soon as the lead answers; answers replace earlier ones, notes are added to earlier ones.',
  args: z.object({
    answers: z
      .record(z.string(), z.union([z.string(), z.number()]))
      .optional()
      .describe('Answers by question id, e.g. {"q_a1B2c3": "Yes", "q_x9Y8z7": 5000}'),
    notes: z.string().trim().max(2000).optional().describe('Anything else worth passing on to the team'),
  }),
  async run(ctx, args) {
    const loaded = await loadActiveLead(ctx);
    if ('answer' in loaded) return loaded.answer;
    const { lead } = loaded;
    const { questions } = agentConfigOf(ctx.workspace);
    const given = Object.entries(args.answers ?? {});
    const notes = args.notes ? args.notes : null;
    if (given.length === 0 && notes === null) return 'Nothing to save: give answers by question id, notes, or both.';

    const answers: Record<string, string> = {};
    const problems: string[] = [];
    const unknown: string[] = [];
    for (const [id, raw] of given) {
      const question = questions.find((q) => q.id === id);
      if (!question) {
        unknown.push(id);
        continue;
      }
      const checked = checkAnswer(question, raw);
      if ('problem' in checked) problems.push(checked.problem);
      else answers[id] = checked.value;
    }
    if (unknown.length > 0) problems.unshift(`unknown question id(s) ${unknown.join(', ')}`);
    if (problems.length > 0) {
      const form =
        questions.length === 0
          ? 'This workspace has no qualification questions: put what you learned in notes.'
          : ['The questions are:', ...questions.map((q) => `- ${describeQuestion(q)}`)].join('\n');
      return `Nothing was saved: ${problems.join('; ')}.\n${form}`;
    }

    const saved = await saveLeadProfile(ctx.pool, lead.id, { answers, notes });
    if (!saved.ok) return refusalAnswer(saved);

    const done = Object.entries(answers).map(
      ([id, value]) => `${questions.find((q) => q.id === id)!.label} = ${value}`,
    );
    const what = [...(done.length > 0 ? [`answers (${done.join('; ')})`] : []), ...(notes ? ['notes'] : [])].join(
      ' and ',
    );
    const { open } = qualificationState(questions, {
      formResponses: lead.formResponses,
      answers: { ...lead.answers, ...answers },
    });
    const next =
      open.length === 0
        ? 'Every question of the form is answered.'
        : ['Still open:', ...open.map((q) => `- ${describeQuestion(q)}`)].join('\n');
    return `Saved ${what}.\n${next}`;
  },
});

/** The answer in the question's terms: a choice as its option's exact text, a number as digits. */
function checkAnswer(q: QualificationQuestion, raw: string | number): { value: string } | { problem: string } {
  const text = String(raw).trim();
  if (text === '') return { problem: `${q.id} has an empty answer` };
  if (text.length > 1000) return { problem: `${q.id} has an answer longer than 1000 characters` };
  if (q.type === 'number') {
    const plain = text.replace(/[\s_]/g, '');
    if (!NUMBER.test(plain)) {
      return { problem: `${q.id} (${q.label}) needs a number such as 5000, got "${text.slice(0, 100)}"` };
    }
    const value = Number(plain);
    const { min, max } = numberRange(q);
    if (value < min || value > max) {
      const range = describeRangeOf(min, max);
      return { problem: `${q.id} (${q.label}) must be ${range}, got ${plain}: ask the lead to check the number` };
    }
    return { value: String(value) };
  }
  if (q.type === 'choice') {
    const option = q.options?.find((o) => o.trim().toLowerCase() === text.toLowerCase());
    return option
      ? { value: option }
      : { problem: `${q.id} (${q.label}) must be one of: ${(q.options ?? []).join(', ')}` };
  }
  return { value: text };
}

function describeRangeOf(min: number, max: number): string {
  return max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `between ${min} and ${max}`;
}
