// The Form and Agent pages' data, as the admin API sends it (src/admin/form-agent-admin-schemas.ts).

export type QuestionType = 'text' | 'choice' | 'number';

export interface Question {
  id: string;
  label: string;
  type: QuestionType;
  options?: string[];
  required: boolean;
  /** Number questions: the range the agent accepts (blank min: 0 and up). */
  min?: number;
  max?: number;
}

export interface FormSettings {
  channel: 'voice' | 'whatsapp';
  version: string;
  questions: Question[];
  retiredQuestions: Array<{ id: string; label: string }>;
  leadsUrl: string;
}

export interface Persona { agentName: string; company: string; offer: string; tone: string }

export interface TemplateFields {
  provider: 'twilio' | 'meta';
  templateContentSid?: string;
  templateName?: string;
  templateLanguage?: string;
  templateBody: string | null;
}

export interface AgentData {
  channel: 'voice' | 'whatsapp';
  version: string;
  enabled: boolean;
  agent: {
    persona: Persona; criteria: string; timeZone: string; defaultCountry: string | null; allowedLinkDomains?: string[];
    /** Absent: the default holding message. */
    holdingMessage?: string;
  };
  whatsappTemplate: TemplateFields | null;
}
