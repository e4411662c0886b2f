import crypto from 'node:crypto';
import { failureMessage, providerRequest, requestFailure } from '../../shared/provider-request.ts';
import { isRecord } from '../../shared/settings-lookup.ts';

// The Graph API's lead retrieval (Meta's Lead Ads "Retrieving Leads" docs), with a Page access
// token that has `leads_retrieval`:
//   GET /{leadgen-id}?fields=…             one lead, after its `leadgen` webhook
//   GET /{form-id}/leads?fields=…&after=…  a form's leads, newest first, paged by cursor (backfill)
// The base URL is the installation's (WHATSAPP_GRAPH_BASE_URL: the same Graph API, version
// included), never a workspace's, so the egress policy for tenant-chosen URLs does not apply.
// The token travels in the Authorization header, never in a URL, and `appsecret_proof` is sent
// so an app with "Require App Secret" on accepts the call. Nothing here logs; callers record the
// outcome (with the token masked) in the integration log.

/** The Lead fields we read; `is_organic` is true for leads not from an ad (the Testing Tool's are organic). */
export const LEAD_FIELDS = 'id,created_time,field_data,ad_id,adset_id,campaign_id,form_id,is_organic,platform';

export interface MetaLeadField {
  name: string;
  values: string[];
}

export interface MetaLead {
  id: string;
  createdTime?: string;
  fieldData: MetaLeadField[];
  adId?: string;
  adsetId?: string;
  campaignId?: string;
  formId?: string;
  isOrganic?: boolean;
  platform?: string;
}

export type GraphResult<T> =
  | { ok: true; value: T; httpStatus: number }
  /** `httpStatus` undefined: Graph was not reached. */
  | { ok: false; httpStatus?: number; code?: number; message: string };

export interface MetaLeadClientOptions {
  baseUrl: string;
  pageAccessToken: string;
  appSecret: string;
  /** Default 10 000 ms. */
  timeoutMs?: number;
}

export interface LeadPage {
  leads: MetaLead[];
  /** The cursor of the next (older) page; undefined on the last. */
  after?: string;
}

export class MetaLeadClient {
  readonly #base: string;
  readonly #token: string;
  readonly #proof: string;
  readonly #timeoutMs: number;

  constructor(opts: MetaLeadClientOptions) {
    this.#base = opts.baseUrl.replace(/\/+$/, '');
    this.#token = opts.pageAccessToken;
    this.#proof = crypto.createHmac('sha256', opts.appSecret).update(opts.pageAccessToken).digest('hex');
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
  }

  /** `GET /{leadgen-id}`. */
  async lead(leadgenId: string): Promise<GraphResult<MetaLead>> {
    const got = await this.#get(`/${encodeURIComponent(leadgenId)}`, { fields: LEAD_FIELDS });
    if (!got.ok) return got;
    const lead = parseLead(got.value);
    return lead ? { ok: true, value: lead, httpStatus: got.httpStatus } : unexpected(got.httpStatus);
  }

  /** One page of `GET /{form-id}/leads`, created after `since` when given (Graph's `time_created` filter). */
  async formLeads(
    formId: string,
    opts: { since?: Date; after?: string; limit?: number },
  ): Promise<GraphResult<LeadPage>> {
    const params: Record<string, string> = { fields: LEAD_FIELDS, limit: String(opts.limit ?? 100) };
    if (opts.since) {
      const value = Math.floor(opts.since.getTime() / 1000);
      params.filtering = JSON.stringify([{ field: 'time_created', operator: 'GREATER_THAN', value }]);
    }
    if (opts.after) params.after = opts.after;
    const got = await this.#get(`/${encodeURIComponent(formId)}/leads`, params);
    if (!got.ok) return got;
    const body = got.value;
    if (!Array.isArray(body.data)) return unexpected(got.httpStatus);
    const leads = body.data.map(parseLead);
    if (leads.some((l) => l === null)) return unexpected(got.httpStatus);
    const paging = isRecord(body.paging) ? body.paging : {};
    const cursors = isRecord(paging.cursors) ? paging.cursors : {};
    // Graph gives `next` only when there is a next page; the cursor alone is there on the last one too.
    const after = typeof paging.next === 'string' && typeof cursors.after === 'string' ? cursors.after : undefined;
    return { ok: true, value: { leads: leads as MetaLead[], ...(after ? { after } : {}) }, httpStatus: got.httpStatus };
  }

  /** Masks the token wherever it might appear (an error text, a proxy's page). */
  scrub(text: string): string {
    return this.#token === '' ? text : text.split(this.#token).join('[redacted]');
  }

  async #get(path: string, params: Record<string, string>): Promise<GraphResult<Record<string, unknown>>> {
    const query = new URLSearchParams({ ...params, appsecret_proof: this.#proof });
    let status: number;
    let text: string;
    try {
      const res = await providerRequest('meta', `${this.#base}${path}?${query}`, {
        method: 'GET',
        headers: { authorization: `Bearer ${this.#token}`, accept: 'application/json' },
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      status = res.status;
      text = res.text;
    } catch (err) {
      return { ok: false, message: this.scrub(failureMessage(requestFailure(err), 'the Graph API', this.#timeoutMs)) };
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return {
        ok: false,
        httpStatus: status,
        message: `The Graph API answered ${status} with a body that is not JSON.`,
      };
    }
    const body = isRecord(json) ? json : {};
    if (status >= 200 && status < 300) return { ok: true, value: body, httpStatus: status };
    const error = isRecord(body.error) ? body.error : {};
    const code = typeof error.code === 'number' ? error.code : undefined;
    const message =
      typeof error.message === 'string' && error.message !== '' ? error.message : `The Graph API answered ${status}.`;
    return { ok: false, httpStatus: status, ...(code === undefined ? {} : { code }), message: this.scrub(message) };
  }
}

function unexpected(httpStatus: number): GraphResult<never> {
  return { ok: false, httpStatus, message: 'The Graph API sent a lead body of an unexpected shape.' };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A Lead node as Graph sends it; null when it is not one. */
export function parseLead(raw: unknown): MetaLead | null {
  if (!isRecord(raw) || typeof raw.id !== 'string' || raw.id === '') return null;
  const fields = Array.isArray(raw.field_data) ? raw.field_data : [];
  const fieldData: MetaLeadField[] = [];
  for (const f of fields) {
    if (!isRecord(f) || typeof f.name !== 'string') continue;
    const values = Array.isArray(f.values) ? f.values.filter((v): v is string => typeof v === 'string') : [];
    fieldData.push({ name: f.name, values });
  }
  const optional = {
    createdTime: str(raw.created_time),
    adId: str(raw.ad_id),
    adsetId: str(raw.adset_id),
    campaignId: str(raw.campaign_id),
    formId: str(raw.form_id),
    platform: str(raw.platform),
  };
  return {
    id: raw.id,
    fieldData,
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
    ...(typeof raw.is_organic === 'boolean' ? { isOrganic: raw.is_organic } : {}),
  };
}
