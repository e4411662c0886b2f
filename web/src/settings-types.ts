import type { Schemas } from './api.ts';

// The Form and Agent pages' data, as the admin API sends it (src/admin/form-agent-admin-schemas.ts),
// named from the generated types (admin-api-types.ts).

export type FormSettings = Schemas['AdminForm'];
export type Question = FormSettings['questions'][number];
export type QuestionType = Question['type'];

export type AgentData = Schemas['AdminAgentSettings'];
export type Persona = AgentData['agent']['persona'];
export type TemplateFields = NonNullable<AgentData['whatsappTemplate']>;
