import { z } from 'zod';
import { AppError, type ValidationIssue } from '../../shared/errors.ts';
import { validationIssues } from '../../shared/schema-parse.ts';

// Meta's Page `leadgen` webhook (Meta's Webhooks for Lead Ads docs): `{object: 'page', entry[]:
// {id: <page id>, time, changes[]: {field: 'leadgen', value: {leadgen_id, page_id, form_id,
// ad_id, adgroup_id, created_time}}}}`. It names the lead only: its answers are read from the
// Graph API with the Page token (meta-lead-client.ts). One POST may batch several entries and
// changes. Parsed only after the signature check; lenient where Meta may add fields, strict on
// the lead id we act on.

/** Graph ids are decimal strings; some payloads have carried them as numbers. */
const graphId = z.union([z.string().regex(/^\d{1,30}$/), z.number().int().nonnegative()]).transform((v) => String(v));

const leadgenValueSchema = z.looseObject({
  leadgen_id: graphId,
  page_id: graphId.optional(),
  form_id: graphId.optional(),
  ad_id: graphId.optional(),
  adgroup_id: graphId.optional(),
  created_time: z.number().int().optional(),
});

const bodySchema = z.looseObject({
  object: z.string(),
  entry: z.array(
    z.looseObject({
      id: z.union([z.string(), z.number()]).optional(),
      changes: z.array(z.looseObject({ field: z.string(), value: z.unknown() })).optional(),
    }),
  ),
});

/** One lead a `leadgen` change announced. */
export interface LeadgenNotice {
  leadgenId: string;
  pageId?: string;
  formId?: string;
  adId?: string;
  adgroupId?: string;
}

/** What a verified `leadgen` body announces: its well-formed leads, and what was wrong with the rest. */
export interface LeadgenWebhook {
  /** The leads of the well-formed `leadgen` changes, in body order. */
  notices: LeadgenNotice[];
  /**
   * The issues of the malformed `leadgen` changes, each path from the body's root
   * (`entry.0.changes.1.value.leadgen_id`).
   */
  invalid: ValidationIssue[];
}

/**
 * The leads a verified webhook body announces. Throws AppError invalid_json / validation_failed
 * for a body that is not Meta's; a malformed `leadgen` change does not refuse the others of the
 * batch, its issues are in `invalid`. Other objects and fields yield nothing.
 */
export function parseLeadgenWebhook(raw: Buffer | string): LeadgenWebhook {
  let json: unknown;
  try {
    json = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch {
    throw new AppError('invalid_json');
  }
  const body = bodySchema.safeParse(json);
  if (!body.success) throw new AppError('validation_failed', { issues: validationIssues(body.error) });
  const notices: LeadgenNotice[] = [];
  const invalid: ValidationIssue[] = [];
  if (body.data.object !== 'page') return { notices, invalid };
  body.data.entry.forEach((entry, e) => {
    (entry.changes ?? []).forEach((change, c) => {
      if (change.field !== 'leadgen') return;
      const value = leadgenValueSchema.safeParse(change.value);
      if (!value.success) {
        invalid.push(...validationIssues(value.error, ['entry', String(e), 'changes', String(c), 'value']));
        return;
      }
      const v = value.data;
      notices.push({
        leadgenId: v.leadgen_id,
        ...(v.page_id ? { pageId: v.page_id } : {}),
        ...(v.form_id ? { formId: v.form_id } : {}),
        ...(v.ad_id ? { adId: v.ad_id } : {}),
        ...(v.adgroup_id ? { adgroupId: v.adgroup_id } : {}),
      });
    });
  });
  return { notices, invalid };
}
