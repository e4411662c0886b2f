import { z } from 'zod';
import type { LeadIntake } from '../../leads/lead-queries.ts';

// Where a lead came from, in words for the lead page (docs/DASHBOARD.md, "Lead page"; docs/INTAKE.md):
// the intake path (leads.source), the connected source's name and the campaign/ad/form ids or the
// page a form was on (leads.source_detail). The words are made here, once, so the page and any
// other reader of the API say the same thing.

export const LEAD_SOURCE_KINDS = ['api', 'form', 'embed', 'publishable', 'meta', 'google', 'webhook'] as const;
type Kind = (typeof LEAD_SOURCE_KINDS)[number];
// The same kinds as the intake's (lead-queries.ts): one added there and not here fails the type-check.
type SameKinds = [LeadIntake['source']] extends [Kind] ? ([Kind] extends [LeadIntake['source']] ? true : false) : false;
export const SAME_KINDS_AS_INTAKE: SameKinds = true;

export const LEAD_SOURCE_TEXT =
  '`api`: a secret API key; `form`: the hosted form; `embed`: the form embedded in a site; `publishable`: a ' +
  "site's own form with a publishable key; `meta`, `google`: lead ads; `webhook`: a generic webhook.";

export const leadSourceSchema = z
  .object({
    kind: z.enum(LEAD_SOURCE_KINDS),
    words: z.string().meta({
      description:
        'The source in words: "Hosted form", "Embedded form on https://…", "Meta Lead Ads — <source> (ad 1, form 2)"…',
    }),
    name: z.string().nullable().meta({ description: "The connected source's name (meta, google, webhook)." }),
    sourceLeadId: z.string().nullable().meta({ description: "The source's own id of the lead (Meta's lead id…)." }),
    detail: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({ description: 'Campaign, ad and form ids, the page a form was on (as the source sent them).' }),
  })
  .meta({ description: `How the lead came in. ${LEAD_SOURCE_TEXT}` });

export type LeadSourceView = z.infer<typeof leadSourceSchema>;

export interface LeadSourceRow {
  source: string;
  source_name: string | null;
  source_lead_id: string | null;
  source_detail: Record<string, unknown> | null;
  key_name: string | null;
}

/** The lead's source as the page shows it. */
export function leadSourceView(r: LeadSourceRow): LeadSourceView {
  const kind = (LEAD_SOURCE_KINDS as readonly string[]).includes(r.source) ? (r.source as Kind) : 'api';
  const detail = r.source_detail && typeof r.source_detail === 'object' ? r.source_detail : null;
  return {
    kind,
    words: sourceWords(kind, r.source_name, detail ?? {}, r.key_name),
    name: r.source_name,
    sourceLeadId: r.source_lead_id,
    detail,
  };
}

// An id or address the source sent: text only (a source may send anything in its JSON).
function text(detail: Record<string, unknown>, key: string): string | null {
  const v = detail[key];
  if (typeof v === 'string' && v.trim() !== '') return v.trim();
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return null;
}

/** "(campaign 1, ad 2, form 3)" for the ids present; empty when none is. */
function ids(detail: Record<string, unknown>, fields: Array<[label: string, key: string]>): string {
  const parts = fields.flatMap(([label, key]) => {
    const v = text(detail, key);
    return v === null ? [] : [`${label} ${v}`];
  });
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

function sourceWords(kind: Kind, name: string | null, detail: Record<string, unknown>, keyName: string | null): string {
  const named = (title: string) => (name ? `${title} — ${name}` : title);
  switch (kind) {
    case 'form':
      return 'Hosted form';
    case 'embed': {
      const page = text(detail, 'page');
      return page ? `Embedded form on ${page}` : 'Embedded form';
    }
    case 'publishable': {
      const origin = text(detail, 'origin');
      const key = keyName ? `Publishable key ${keyName}` : 'Publishable key';
      return origin ? `${key} from ${origin}` : key;
    }
    case 'meta':
      return (
        named('Meta Lead Ads') +
        ids(detail, [
          ['campaign', 'campaignId'],
          ['ad', 'adId'],
          ['form', 'formId'],
        ])
      );
    case 'google':
      return (
        named('Google lead form') +
        ids(detail, [
          ['campaign', 'campaignId'],
          ['ad', 'creativeId'],
          ['form', 'formId'],
        ])
      );
    case 'webhook':
      return named('Webhook');
    case 'api':
      return keyName ? `API key ${keyName}` : 'API';
  }
}
