// The read-only endpoints `workspace verify` uses, as each simulator answers them on the wire:
// the fields and error bodies of the providers' own API descriptions.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  DEFAULT_EVENT_TYPE,
  startCalcomSimulator,
  type CalcomSimulator,
} from '../../src/simulators/calcom/calcom-simulator.ts';
import { startChatSimulator, type ChatSimulator } from '../../src/simulators/chat-model/chat-simulator.ts';
import { META_SIM, startMetaSimulator, type MetaSimulator } from '../../src/simulators/meta/meta-simulator.ts';
import {
  SIM_ACCOUNT_SID,
  SIM_AUTH_TOKEN,
  SIM_WHATSAPP_SENDER,
  startTwilioSimulator,
  type TwilioSimulator,
} from '../../src/simulators/twilio/twilio-simulator.ts';

let twilio: TwilioSimulator;
let meta: MetaSimulator;
let calcom: CalcomSimulator;
let chat: ChatSimulator;

before(async () => {
  [twilio, meta, calcom, chat] = await Promise.all([
    startTwilioSimulator(),
    startMetaSimulator(),
    startCalcomSimulator(),
    startChatSimulator({ models: ['gpt-4o-mini'] }),
  ]);
});
after(() => Promise.all([twilio, meta, calcom, chat].map((s) => s.close())));

async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { headers });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});

describe('simulated read endpoints', { concurrency: true }, () => {
  test('Twilio: the Account resource, the IncomingPhoneNumbers page, 401 20003 and 404 20404', async () => {
    const base = `${twilio.url}/2010-04-01/Accounts`;
    const account = await get(`${base}/${SIM_ACCOUNT_SID}.json`, basic(SIM_ACCOUNT_SID, SIM_AUTH_TOKEN));
    assert.equal(account.status, 200);
    assert.deepEqual(Object.keys(account.body).sort(), [
      'auth_token',
      'date_created',
      'date_updated',
      'friendly_name',
      'owner_account_sid',
      'sid',
      'status',
      'subresource_uris',
      'type',
      'uri',
    ]);
    assert.equal(account.body.status, 'active');

    const page = await get(
      `${base}/${SIM_ACCOUNT_SID}/IncomingPhoneNumbers.json?PhoneNumber=${encodeURIComponent(SIM_WHATSAPP_SENDER)}`,
      basic(SIM_ACCOUNT_SID, SIM_AUTH_TOKEN),
    );
    assert.equal(page.status, 200);
    for (const key of [
      'end',
      'first_page_uri',
      'next_page_uri',
      'page',
      'page_size',
      'previous_page_uri',
      'start',
      'uri',
      'incoming_phone_numbers',
    ])
      assert.ok(key in page.body, key);
    const numbers = page.body.incoming_phone_numbers as Array<Record<string, unknown>>;
    assert.deepEqual(
      numbers.map((x) => [x.phone_number, x.account_sid]),
      [[SIM_WHATSAPP_SENDER, SIM_ACCOUNT_SID]],
    );
    assert.match(String(numbers[0]!.sid), /^PN[0-9a-f]{32}$/);
    const none = await get(
      `${base}/${SIM_ACCOUNT_SID}/IncomingPhoneNumbers.json?PhoneNumber=%2B15550009999`,
      basic(SIM_ACCOUNT_SID, SIM_AUTH_TOKEN),
    );
    assert.deepEqual(none.body.incoming_phone_numbers, []);

    const wrong = await get(`${base}/${SIM_ACCOUNT_SID}.json`, basic(SIM_ACCOUNT_SID, 'nope'));
    assert.deepEqual(
      [wrong.status, wrong.body],
      [
        401,
        { code: 20003, message: 'Authenticate', more_info: 'https://www.twilio.com/docs/errors/20003', status: 401 },
      ],
    );
    const other = await get(`${base}/AC00000000000000000000000000000000.json`, basic(SIM_ACCOUNT_SID, SIM_AUTH_TOKEN));
    assert.deepEqual([other.status, other.body.code], [404, 20404]);
  });

  test('Meta: GET /{version}/{phone-number-id} default fields, 401/190 and 400/100/33', async () => {
    const url = `${meta.graphBaseUrl}/${META_SIM.phoneNumberId}`;
    const ok = await get(url, { authorization: `Bearer ${META_SIM.accessToken}` });
    assert.equal(ok.status, 200);
    assert.deepEqual(Object.keys(ok.body).sort(), ['display_phone_number', 'id', 'quality_rating', 'verified_name']);
    assert.equal(ok.body.id, META_SIM.phoneNumberId);
    const token = await get(url, { authorization: 'Bearer expired' });
    assert.equal(token.status, 401);
    assert.deepEqual(
      [(token.body.error as Record<string, unknown>).code, (token.body.error as Record<string, unknown>).type],
      [190, 'OAuthException'],
    );
    const unknown = await get(`${meta.graphBaseUrl}/1234`, { authorization: `Bearer ${META_SIM.accessToken}` });
    const e = unknown.body.error as Record<string, unknown>;
    assert.deepEqual([unknown.status, e.code, e.error_subcode, e.type], [400, 100, 33, 'GraphMethodException']);
    assert.match(String(e.message), /^Unsupported get request\. Object with ID '1234' does not exist/);
  });

  test('Cal.com: GET /v2/event-types/{id} with cal-api-version 2024-06-14; 401 and 404 envelopes', async () => {
    const headers = { authorization: `Bearer ${calcom.apiKey}`, 'cal-api-version': '2024-06-14' };
    const ok = await get(`${calcom.url}/v2/event-types/${DEFAULT_EVENT_TYPE.id}`, headers);
    assert.equal(ok.status, 200);
    assert.equal(ok.body.status, 'success');
    const data = ok.body.data as Record<string, unknown>;
    // EventTypeOutput_2024_06_14's required fields.
    for (const key of [
      'id',
      'lengthInMinutes',
      'title',
      'slug',
      'description',
      'locations',
      'bookingFields',
      'disableGuests',
      'recurrence',
      'metadata',
      'price',
      'currency',
      'lockTimeZoneToggleOnBookingPage',
      'forwardParamsSuccessRedirect',
      'successRedirectUrl',
      'isInstantEvent',
      'scheduleId',
      'hidden',
      'bookingRequiresAuthentication',
      'ownerId',
      'users',
      'bookingUrl',
    ]) {
      assert.ok(key in data, key);
    }
    assert.deepEqual(
      [data.id, data.title, data.lengthInMinutes],
      [DEFAULT_EVENT_TYPE.id, DEFAULT_EVENT_TYPE.title, DEFAULT_EVENT_TYPE.lengthInMinutes],
    );
    const missing = await get(`${calcom.url}/v2/event-types/9`, headers);
    assert.deepEqual(
      [missing.status, missing.body.status, (missing.body.error as Record<string, unknown>).code],
      [404, 'error', 'NotFoundException'],
    );
    const key = await get(`${calcom.url}/v2/event-types/${DEFAULT_EVENT_TYPE.id}`, {
      ...headers,
      authorization: 'Bearer cal_live_wrong',
    });
    assert.deepEqual([key.status, (key.body.error as Record<string, unknown>).code], [401, 'UnauthorizedException']);
  });

  test(
    'OpenAI-compatible: GET /v1/models/{model}, GET /v1/models, ' + '401 invalid_api_key and 404 model_not_found',
    async () => {
      const auth = { authorization: `Bearer ${chat.apiKey}` };
      const one = await get(`${chat.baseUrl}/models/gpt-4o-mini`, auth);
      assert.equal(one.status, 200);
      assert.deepEqual(Object.keys(one.body).sort(), ['created', 'id', 'object', 'owned_by']);
      assert.equal(one.body.object, 'model');
      const list = await get(`${chat.baseUrl}/models`, auth);
      assert.equal(list.body.object, 'list');
      assert.deepEqual(
        (list.body.data as Array<{ id: string }>).map((m) => m.id),
        ['gpt-4o-mini'],
      );
      const unknown = await get(`${chat.baseUrl}/models/gpt-5-imaginary`, auth);
      assert.deepEqual(
        [unknown.status, unknown.body],
        [
          404,
          {
            error: {
              message: "The model 'gpt-5-imaginary' does not exist",
              type: 'invalid_request_error',
              param: 'model',
              code: 'model_not_found',
            },
          },
        ],
      );
      const key = await get(`${chat.baseUrl}/models/gpt-4o-mini`, { authorization: 'Bearer sk-wrong-0000000000' });
      assert.deepEqual([key.status, (key.body.error as Record<string, unknown>).code], [401, 'invalid_api_key']);
    },
  );
});
