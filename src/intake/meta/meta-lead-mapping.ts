import { z } from 'zod';
import type { MetaLead } from './meta-lead-client.ts';

// A Meta lead's `field_data` → the body LeadService.submit takes (docs/API.md), by the source's
// mapping (edited on the Form page) over defaults for Meta's standard fields. Meta names standard
// fields by their type (`full_name`, `first_name`, `last_name`, `phone_number`, `email`, `city`…)
// and custom questions by the key the form gave them. A field mapped nowhere is kept in the lead's
// metadata under its Meta name, so the agent still sees the answer.

// One message for a bad target, whichever branch refused it (the path names the Meta field).
const TARGET_ERROR =
  'A target is name, first_name, last_name, phone, email, goal, ignore, question:<id> or metadata:<key>.';
/** Where a Meta field goes: a lead field, a question of the workspace's form, a metadata key, or nowhere. */
export const mappingTargetSchema = z.union(
  [
    z.enum(['name', 'first_name', 'last_name', 'phone', 'email', 'goal', 'ignore']),
    z.string().regex(/^(question|metadata):[A-Za-z0-9_.-]{1,64}$/, TARGET_ERROR),
  ],
  { error: TARGET_ERROR },
);
export type MappingTarget = z.output<typeof mappingTargetSchema>;

export const fieldMappingSchema = z.record(z.string().min(1).max(200), mappingTargetSchema);

export const DEFAULT_META_MAPPING: Readonly<Record<string, MappingTarget>> = {
  full_name: 'name',
  first_name: 'first_name',
  last_name: 'last_name',
  phone_number: 'phone',
  email: 'email',
};

/**
 * The marker of the Lead Ads Testing Tool's default answers ("Create lead" without editing the
 * preview), as integrators report it: `<test lead: dummy data for full_name>`. Not in Meta's
 * documentation (docs/INTAKE.md, "Meta Lead Ads").
 */
const DUMMY_MARKER = /^<test lead: dummy data for /i;
/** A sandbox number of the outcome table that books (docs/SANDBOX.md), for a dummy lead's phone. */
export const TEST_LEAD_PHONE = '+15550100001';

export interface MappedMetaLead {
  /** The POST body LeadService.submit validates (consent given on Meta's form). */
  body: Record<string, unknown>;
  /** The Testing Tool's dummy answers: the lead goes to the sandbox. */
  dummy: boolean;
}

export function mapMetaLead(lead: MetaLead, mapping: Record<string, MappingTarget> = {}): MappedMetaLead {
  const merged: Record<string, MappingTarget> = { ...DEFAULT_META_MAPPING, ...mapping };
  const dummy = lead.fieldData.some((f) => f.values.some((v) => DUMMY_MARKER.test(v)));
  const parts: Record<string, string> = {};
  const formResponses: Record<string, string> = {};
  const metadata: Record<string, string> = {};
  for (const field of lead.fieldData) {
    // A multiple-choice question with several answers: Meta sends each as its own value.
    const value = field.values.join(', ').trim();
    if (value === '') continue;
    const target = merged[field.name];
    if (target === 'ignore') continue;
    if (target === undefined) metadata[field.name] = value;
    else if (target.startsWith('question:')) formResponses[target.slice(9)] = value;
    else if (target.startsWith('metadata:')) metadata[target.slice(9)] = value;
    else parts[target] ??= value;
  }
  const name = parts.name ?? ([parts.first_name, parts.last_name].filter(Boolean).join(' ') || undefined);
  const body: Record<string, unknown> = {
    name: dummy ? 'Meta test lead' : name,
    phone: dummy ? TEST_LEAD_PHONE : parts.phone,
    consent: true,
    ...(parts.email && !dummy ? { email: parts.email } : {}),
    ...(parts.goal ? { goal: parts.goal } : {}),
    ...(Object.keys(formResponses).length > 0 ? { formResponses } : {}),
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
  return { body, dummy };
}

/** Campaign and ad ids kept on the lead (leads.source_detail). */
export function metaLeadDetail(lead: MetaLead, pageId?: string): Record<string, unknown> {
  const detail: Record<string, unknown> = {
    leadgenId: lead.id,
    ...(pageId ? { pageId } : {}),
    ...(lead.formId ? { formId: lead.formId } : {}),
    ...(lead.adId ? { adId: lead.adId } : {}),
    ...(lead.adsetId ? { adsetId: lead.adsetId } : {}),
    ...(lead.campaignId ? { campaignId: lead.campaignId } : {}),
    ...(lead.platform ? { platform: lead.platform } : {}),
    ...(lead.createdTime ? { createdTime: lead.createdTime } : {}),
  };
  if (lead.isOrganic !== undefined) detail.organic = lead.isOrganic;
  return detail;
}
