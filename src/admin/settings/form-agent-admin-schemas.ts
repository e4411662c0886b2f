import { z } from 'zod';
import { qualificationQuestionSchema } from '../../workspaces/agent-config.ts';
import { contactPlanSchema } from '../../workspaces/contact-plan-config.ts';

// Requests and responses of the dashboard's Form and Agent pages (docs/DASHBOARD.md, "Form
// builder and agent settings"). The fields' own checks are the config file's
// (src/workspaces/agent-config.ts, src/workspaces/workspace-config.ts): one set of rules for both.

const version = z
  .string({ error: 'version is required: send the version the page loaded' })
  .min(1)
  .max(64)
  .meta({ description: 'The `version` of the GET this edit starts from; a different current version answers 409.' });

export const formBody = z
  .object({
    version,
    questions: z
      .array(qualificationQuestionSchema)
      .max(50, 'a form has at most 50 questions')
      .meta({
        description:
          "The whole ordered list. Keep each existing question's `id`; leave it out for a new question. " +
          'A question left out is retired.',
      }),
  })
  .strict();
export type FormBody = z.output<typeof formBody>;

const optionalText = (max: number) => z.string().trim().max(max).nullable().optional();

/** Only the template fields of the `whatsapp` settings: its secrets are never sent or taken here. */
export const templateFields = z
  .object({
    templateContentSid: z
      .string()
      .trim()
      .optional()
      .meta({ description: 'Twilio: the approved template, HX + 32 hex characters.' }),
    templateName: z.string().trim().optional().meta({ description: "Meta: the approved template's name." }),
    templateLanguage: z.string().trim().optional().meta({ description: "Meta: the template's language code (en_US)." }),
    templateBody: optionalText(1024).meta({
      description: "Optional: the template's text with {{1}}; empty or null removes it.",
    }),
  })
  .strict();

export const agentDraft = z
  .object({
    persona: z.object({ agentName: z.string(), company: z.string(), offer: z.string(), tone: z.string() }).strict(),
    criteria: z.string().max(4000, 'criteria must be at most 4000 characters'),
    timeZone: z.string(),
    defaultCountry: optionalText(2).meta({ description: 'ISO 3166-1 alpha-2; empty or null: none.' }),
    allowedLinkDomains: z.array(z.string()).max(20).optional().meta({
      description:
        "Domains the agent's messages may link to (their subdomains too); empty: no links. Omitted: unchanged.",
    }),
    holdingMessage: optionalText(500).meta({
      description:
        'What a WhatsApp lead hears when the agent hands it to a person without an answer; ' +
        'empty or null: the default. Omitted: unchanged.',
    }),
    whatsappTemplate: templateFields.optional().meta({ description: 'WhatsApp workspaces whose provider is set.' }),
    contactPlan: contactPlanSchema.optional().meta({
      description:
        "Follow-ups: attempts, delays, the calling window (the config file's `agent.contactPlan`). Omitted: unchanged.",
    }),
  })
  .strict();
export type AgentDraft = z.output<typeof agentDraft>;

export const agentBody = agentDraft.extend({ version }).strict();
export type AgentBody = z.output<typeof agentBody>;

const question = z.object({
  id: z.string(),
  label: z.string(),
  type: z.enum(['text', 'choice', 'number']),
  options: z.array(z.string()).optional(),
  required: z.boolean(),
  min: z.number().optional(),
  max: z.number().optional(),
});

export const formSchema = z.object({
  ok: z.literal(true),
  channel: z.enum(['voice', 'whatsapp']),
  version: z.string(),
  questions: z.array(question),
  retiredQuestions: z
    .array(z.object({ id: z.string(), label: z.string() }))
    .meta({ description: "Questions taken off the form, with the label they had: old leads' answers keep it." }),
  leadsUrl: z.string().meta({ description: "Where the integrator's back end posts leads (`POST /api/public/leads`)." }),
});

export const agentSchema = z.object({
  ok: z.literal(true),
  channel: z.enum(['voice', 'whatsapp']),
  version: z.string(),
  enabled: z.boolean().meta({ description: 'The kill switch: false stops the WhatsApp agent from sending.' }),
  agent: z.object({
    persona: z.object({ agentName: z.string(), company: z.string(), offer: z.string(), tone: z.string() }),
    criteria: z.string(),
    timeZone: z.string(),
    defaultCountry: z.string().nullable(),
    allowedLinkDomains: z
      .array(z.string())
      .optional()
      .meta({ description: "Absent: none, the agent's messages carry no links." }),
    holdingMessage: z.string().optional().meta({
      description:
        'The workspace\'s own holding message; absent: the default, "Thanks — a colleague will reply shortly."',
    }),
    contactPlan: contactPlanSchema.meta({
      description: "Follow-ups as they run: the workspace's own, or the defaults.",
    }),
  }),
  whatsappTemplate: z
    .object({
      provider: z.enum(['twilio', 'meta']),
      templateContentSid: z.string().optional(),
      templateName: z.string().optional(),
      templateLanguage: z.string().optional(),
      templateBody: z.string().nullable(),
    })
    .nullable()
    .meta({ description: 'Null on voice workspaces and until the WhatsApp provider is set.' }),
});

export const previewSchema = z.object({
  ok: z.literal(true),
  prompt: z.string().meta({
    description: 'The system prompt the agent would receive for a sample lead, from the same builder the agent uses.',
  }),
});
export const switchSchema = z.object({ ok: z.literal(true), enabled: z.boolean() });
