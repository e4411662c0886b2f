import { z } from 'zod';
import { AppError } from '../../shared/errors.ts';
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

/**
 * The leads a verified webhook body announces, in body order. Throws AppError invalid_json /
 * validation_failed for a body that is not Meta's; other objects and fields yield nothing.
 */
export function parseLeadgenWebhook(raw: Buffer | string): LeadgenNotice[] {
  let json: unknown;
  try {
    json = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch {
    throw new AppError('invalid_json');
  }
  const body = bodySchema.safeParse(json);
  if (!body.success) throw invalid(body.error);
  if (body.data.object !== 'page') return [];
  const notices: LeadgenNotice[] = [];
  for (const entry of body.data.entry) {
    for (const change of entry.changes ?? []) {
      if (change.field !== 'leadgen') continue;
      const value = leadgenValueSchema.safeParse(change.value);
      if (!value.success) throw invalid(value.error);
      const v = value.data;
      notices.push({
        leadgenId: v.leadgen_id,
        ...(v.page_id ? { pageId: v.page_id } : {}),
        ...(v.form_id ? { formId: v.form_id } : {}),
        ...(v.ad_id ? { adId: v.ad_id } : {}),
        ...(v.adgroup_id ? { adgroupId: v.adgroup_id } : {}),
      });
    }
  }
  return notices;
}

function invalid(error: z.ZodError): AppError {
  return new AppError('validation_failed', {
    issues: validationIssues(error),
  });
}
