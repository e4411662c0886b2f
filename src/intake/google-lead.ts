import { applyMapping, type FieldMapping, type MappingDefaults } from './field-mapping.ts';
import type { IntakeDelivery } from './intake-service.ts';

// Google Ads lead form webhooks (developers.google.com/google-ads/webhook/docs/implementation):
// one JSON POST per lead, { lead_id, user_column_data: [{ column_id, column_name, string_value }],
// api_version, form_id, campaign_id, google_key, is_test, gcl_id, adgroup_id, creative_id, … }.
// The answers are flattened to { COLUMN_ID: value } (a custom question without a column id goes
// by its column_name), and the source's mapping names those keys, so Google's columns map with
// the same paths as a generic webhook: FULL_NAME, PHONE_NUMBER, EMAIL by default.

export const GOOGLE_DEFAULTS: MappingDefaults = {
  name: [['FULL_NAME'], ['FIRST_NAME', 'LAST_NAME']],
  phone: ['PHONE_NUMBER', 'WORK_PHONE'],
  email: ['EMAIL', 'WORK_EMAIL'],
  goal: [],
  // The envelope's lead_id and is_test decide these, never a column.
  sourceLeadId: [],
  test: [],
  metadataKeys: 'lower',
};

export interface GoogleLeadPayload {
  lead_id?: unknown;
  user_column_data?: unknown;
  google_key?: unknown;
  is_test?: unknown;
  [field: string]: unknown;
}

/** Envelope fields kept on the lead (source_detail), under our names. */
const DETAIL_FIELDS = {
  campaign_id: 'campaignId',
  adgroup_id: 'adGroupId',
  creative_id: 'creativeId',
  form_id: 'formId',
  asset_group_id: 'assetGroupId',
  gcl_id: 'gclId',
  api_version: 'apiVersion',
} as const;

export function isGooglePayload(body: unknown): body is GoogleLeadPayload {
  return body !== null && typeof body === 'object' && !Array.isArray(body);
}

/** The columns as one flat object: { FULL_NAME: 'Ada Lovelace', PHONE_NUMBER: '+44…', … }. */
export function googleColumns(payload: GoogleLeadPayload): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(payload.user_column_data)) return out;
  for (const c of payload.user_column_data.slice(0, 100)) {
    if (c === null || typeof c !== 'object') continue;
    const col = c as Record<string, unknown>;
    const id = typeof col.column_id === 'string' && col.column_id !== '' ? col.column_id : col.column_name;
    if (typeof id !== 'string' || id === '' || typeof col.string_value !== 'string') continue;
    out[id.slice(0, 100)] ??= col.string_value;
  }
  return out;
}

export function googleDelivery(payload: GoogleLeadPayload, mapping: FieldMapping): IntakeDelivery {
  const mapped = applyMapping(googleColumns(payload), mapping, GOOGLE_DEFAULTS);
  const leadId = idText(payload.lead_id);
  const detail: Record<string, unknown> = {};
  for (const [wire, ours] of Object.entries(DETAIL_FIELDS)) {
    const v = idText(payload[wire]);
    if (v !== null) detail[ours] = v;
  }
  const { google_key: _key, ...logged } = payload;
  return {
    lead: { ...mapped, sourceLeadId: leadId, test: payload.is_test === true },
    detail,
    payload: logged,
  };
}

// Ids are int64 in Google's schema; JSON numbers beyond 2^53 would already have lost digits in
// JSON.parse, so they are kept as the text we got (Google's examples show them as numbers).
function idText(v: unknown): string | null {
  if (typeof v === 'string' && v.trim() !== '') return v.trim().slice(0, 200);
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return null;
}

const ID_FIELDS = new Set(['lead_id', ...Object.keys(DETAIL_FIELDS)]);

/**
 * Google's body, its int64 ids kept digit for digit: a number beyond 2^53 loses digits in
 * JSON.parse, so the ids are read from their source text (JSON.parse's reviver context, Node 21+).
 * Throws SyntaxError for a body that is not JSON.
 */
export function parseGoogleBody(text: string): unknown {
  return JSON.parse(text, function (this: unknown, key: string, value: unknown, context?: { source?: string }) {
    if (typeof value === 'number' && ID_FIELDS.has(key) && typeof context?.source === 'string') return context.source;
    return value;
  });
}
