import {
  agentConfigOf,
  agentConfigSchema,
  withQuestionIds,
  type AgentConfig,
  type QualificationQuestion,
  type RetiredQuestion,
} from '../../workspaces/agent-config.ts';
import { AppError } from '../../shared/errors.ts';
import type { WorkspaceRow } from '../../workspaces/workspace-queries.ts';
import { parse } from '../../shared/schema-parse.ts';
import type { FormBody } from './form-agent-admin-schemas.ts';
import { requireVersion, versionOf } from '../settings-version.ts';

// The form builder's data (docs/DASHBOARD.md, "Form builder and agent settings"): the ordered
// qualification questions of `workspaces.agent`. A save replaces the whole ordered list; ids
// given are kept, questions without one get a new `q_` id, and questions left out are retired
// with the label they had (withQuestionIds), so old leads' answers keep their labels.

export interface FormView {
  channel: 'voice' | 'whatsapp';
  version: string;
  questions: QualificationQuestion[];
  retiredQuestions: RetiredQuestion[];
}

/** Only the questions: persona edits on the Agent page do not make a form save a conflict. */
const formVersion = (agent: AgentConfig) => versionOf(agent.questions);

export function formView(workspace: WorkspaceRow): FormView {
  const agent = agentConfigOf(workspace);
  return {
    channel: workspace.channel,
    version: formVersion(agent),
    questions: agent.questions,
    retiredQuestions: agent.retiredQuestions ?? [],
  };
}

/** The agent section with the form's new question list; throws on a stale version or a bad list. */
export function applyForm(workspace: WorkspaceRow, body: FormBody): AgentConfig {
  const current = agentConfigOf(workspace);
  requireVersion(body.version, formVersion(current));
  const known = new Set(current.questions.map((q) => q.id));
  const unknown = body.questions.flatMap((q, i) =>
    q.id && !known.has(q.id)
      ? [
          {
            path: ['questions', String(i), 'id'],
            message: `${q.id} is not a question of this form: leave the id out to add a new question.`,
          },
        ]
      : [],
  );
  if (unknown.length > 0) throw new AppError('validation_failed', { issues: unknown });
  const { questions: _questions, retiredQuestions: _retired, ...rest } = current;
  const input = parse(agentConfigSchema, { ...rest, questions: body.questions });
  return withQuestionIds(input, workspace.agent);
}
