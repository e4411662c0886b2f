import crypto from 'node:crypto';
import { postToWebhook } from '../local-http-server.ts';

// Google Ads' lead form webhook, as the advertiser's server receives it
// (developers.google.com/google-ads/webhook/docs/implementation): one JSON POST per lead with
// lead_id, user_column_data [{ column_name, string_value, column_id }], api_version, form_id,
// campaign_id, google_key, is_test, gcl_id, adgroup_id, creative_id (asset_group_id for
// Performance Max). Google documents lead_id as the key to dedupe on and the ids as int64
// ("clients need to use 8 bytes integer"): the simulator writes them as JSON numbers, one of
// them beyond 2^53 by default, so a receiver that reads them as doubles is caught.
// Not confirmed by the documentation, so kept simple here: how often and for how long Google
// retries a non-200 answer (the simulator only re-sends when a test asks, the same bytes), the
// exact values of the "Send test data" button's lead (ours are placeholders of the same shape),
// and whether the body's ids may ever come as strings.

export interface SimGoogleLead {
  fullName?: string;
  firstName?: string;
  lastName?: string;
  phone?: string;
  email?: string;
  postalCode?: string;
  /** Custom questions: column_id when Google gives one, else only column_name. */
  questions?: { columnName: string; columnId?: string; answer: string }[];
  leadId?: string;
  formId?: string;
  campaignId?: string;
  adGroupId?: string;
  creativeId?: string;
  gclId?: string;
  test?: boolean;
}

export interface GoogleSimDelivery {
  url: string;
  /** The exact bytes posted. */
  body: string;
  leadId: string;
  status: number;
  text: string;
}

/** int64 ids written as bare JSON numbers, digit for digit (JSON.stringify cannot for > 2^53). */
function withInt64(json: Record<string, unknown>, ids: Record<string, string>): string {
  let text = JSON.stringify(json);
  for (const [field, digits] of Object.entries(ids)) {
    if (!/^\d{1,19}$/.test(digits)) continue;
    text = text.replace(`"${field}":"${digits}"`, `"${field}":${digits}`);
  }
  return text;
}

/** Google's wire body for one lead, as text (its ids as JSON numbers). */
export function googleLeadBody(lead: SimGoogleLead, googleKey: string): { body: string; leadId: string } {
  const columns: { column_name?: string; string_value: string; column_id?: string }[] = [];
  const add = (columnId: string, columnName: string, value: string | undefined) => {
    if (value !== undefined) columns.push({ column_name: columnName, string_value: value, column_id: columnId });
  };
  add('FULL_NAME', 'Full Name', lead.fullName);
  add('FIRST_NAME', 'First Name', lead.firstName);
  add('LAST_NAME', 'Last Name', lead.lastName);
  add('PHONE_NUMBER', 'User Phone', lead.phone);
  add('EMAIL', 'User Email', lead.email);
  add('POSTAL_CODE', 'Postal Code', lead.postalCode);
  for (const q of lead.questions ?? []) {
    columns.push({
      column_name: q.columnName,
      string_value: q.answer,
      ...(q.columnId ? { column_id: q.columnId } : {}),
    });
  }
  const leadId = lead.leadId ?? `sim-${crypto.randomBytes(12).toString('base64url')}`;
  const ids = {
    form_id: lead.formId ?? '40000000001',
    campaign_id: lead.campaignId ?? '20000000002',
    adgroup_id: lead.adGroupId ?? '9007199254740993',
    creative_id: lead.creativeId ?? '30000000004',
  };
  const json = {
    lead_id: leadId,
    user_column_data: columns,
    api_version: '1.0',
    form_id: ids.form_id,
    campaign_id: ids.campaign_id,
    google_key: googleKey,
    is_test: lead.test ?? false,
    gcl_id: lead.gclId ?? `sim-gclid-${crypto.randomBytes(6).toString('hex')}`,
    adgroup_id: ids.adgroup_id,
    creative_id: ids.creative_id,
  };
  return { body: withInt64(json, ids), leadId };
}

/** Google's side of one lead form's webhook integration: the URL and key the advertiser entered. */
export class GoogleLeadsSimulator {
  readonly #url: string;
  readonly #key: string;
  readonly deliveries: GoogleSimDelivery[] = [];

  constructor(opts: { webhookUrl: string; googleKey: string }) {
    this.#url = opts.webhookUrl;
    this.#key = opts.googleKey;
  }

  /** A person submitted the lead form: Google posts it. */
  async submitLead(lead: SimGoogleLead): Promise<GoogleSimDelivery> {
    const { body, leadId } = googleLeadBody(lead, this.#key);
    return this.#post(body, leadId);
  }

  /** The "Send test data" button of the webhook integration: a lead marked is_test. */
  async sendTestData(): Promise<GoogleSimDelivery> {
    return this.submitLead({
      fullName: 'FirstName LastName',
      phone: '+16505550123',
      email: 'test@example.com',
      postalCode: '94043',
      test: true,
    });
  }

  /** The same delivery again, byte for byte (Google retrying an answer it did not take as success). */
  async redeliver(delivery: GoogleSimDelivery): Promise<GoogleSimDelivery> {
    return this.#post(delivery.body, delivery.leadId);
  }

  async #post(body: string, leadId: string): Promise<GoogleSimDelivery> {
    const res = await postToWebhook(this.#url, { 'content-type': 'application/json' }, body, { timeoutMs: 10_000 });
    const delivery = { url: this.#url, body, leadId, status: res.status, text: res.text };
    this.deliveries.push(delivery);
    return delivery;
  }
}
