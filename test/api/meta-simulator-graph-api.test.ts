// The Meta WhatsApp simulator's Graph API over direct HTTP: auth, body validation with Graph's
// (#100)-family errors, unknown paths.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { META_SIM } from '../../src/simulators/meta/meta-simulator.ts';
import { metaSimulatorSetup } from '../helpers/meta-simulator-setup.ts';

const meta = metaSimulatorSetup();

describe('Meta simulator: Graph auth and validation (direct HTTP)', () => {
  async function post(body: unknown, opts: { token?: string | null; phoneNumberId?: string; path?: string } = {}) {
    const token = opts.token === undefined ? META_SIM.accessToken : opts.token;
    const res = await fetch(
      `${meta.sim.url}${opts.path ?? `/v23.0/${opts.phoneNumberId ?? META_SIM.phoneNumberId}/messages`}`,
      {
        method: 'POST',
        headers: {
          ...(token === null ? {} : { authorization: `Bearer ${token}` }),
          'content-type': 'application/json',
        },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      },
    );
    const json = (await res.json()) as { error?: Record<string, unknown> };
    delete json.error?.fbtrace_id;
    return { status: res.status, json, authenticate: res.headers.get('www-authenticate') };
  }
  const valid = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: '14155550123',
    type: 'template',
    template: {
      name: 'lead_first_contact',
      language: { code: 'en_US' },
      components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }] }],
    },
  };
  const withTemplate = (t: Record<string, unknown>) => ({ ...valid, template: { ...valid.template, ...t } });

  it('answers a valid template send with contacts and an accepted message', async () => {
    const res = await post({ ...valid, to: '+1 (415) 555-0123' });
    assert.equal(res.status, 200);
    const json = res.json as { contacts: unknown; messages: Array<{ id: string; message_status: string }> };
    assert.deepEqual(json.contacts, [{ input: '+1 (415) 555-0123', wa_id: '14155550123' }]);
    assert.equal(json.messages[0]!.message_status, 'accepted');
    assert.deepEqual(Object.keys(res.json), ['messaging_product', 'contacts', 'messages']);
  });

  it("rejects missing and unknown tokens with 401 / 190, and another number's token with 100 / 33", async () => {
    const invalid = {
      status: 401,
      json: {
        error: { message: 'Invalid OAuth access token - Cannot parse access token', type: 'OAuthException', code: 190 },
      },
    };
    assert.deepEqual(
      { ...(await post(valid, { token: null })), authenticate: undefined },
      { ...invalid, authenticate: undefined },
    );
    assert.deepEqual((await post(valid, { token: 'nope' })).json, invalid.json);
    meta.sim.addPhoneNumber({
      id: '777',
      displayPhoneNumber: '15550000777',
      wabaId: '1',
      accessToken: 'other',
      appSecret: 's',
      templates: [],
    });
    const res = await post(valid, { token: 'other' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.json, {
      error: {
        message:
          `Unsupported post request. Object with ID '${META_SIM.phoneNumberId}' does not exist, ` +
          'cannot be loaded due to missing permissions, or does not support this operation. ' +
          'Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api',
        type: 'GraphMethodException',
        code: 100,
        error_subcode: 33,
      },
    });
    assert.equal(meta.sim.sends.length, 0);
  });

  it("answers body errors with Graph's (#100)-family errors", async () => {
    const expectations: Array<[unknown, number, number, string, string?]> = [
      ['not json', 400, 100, '(#100) The parameter messaging_product is required.'],
      [
        { ...valid, messaging_product: 'sms' },
        400,
        100,
        '(#100) Param messaging_product must be one of {WHATSAPP} - got "sms".',
      ],
      [{ ...valid, to: undefined }, 400, 100, '(#100) The parameter to is required.'],
      [
        { ...valid, to: 'abc' },
        400,
        131009,
        '(#131009) Parameter value is not valid',
        'Recipient phone number is not a valid phone number.',
      ],
      [
        { ...valid, to: META_SIM.displayPhoneNumber },
        400,
        131021,
        '(#131021) Recipient cannot be sender',
        'Sender and recipient phone number is the same.',
      ],
      [
        { ...valid, type: 'fax' },
        400,
        100,
        '(#100) Param type must be one of {AUDIO, CONTACTS, DOCUMENT, IMAGE, INTERACTIVE, ' +
          'LOCATION, REACTION, STICKER, TEMPLATE, TEXT, VIDEO} - got "fax".',
      ],
      [
        { ...valid, type: 'image' },
        400,
        131051,
        '(#131051) Unsupported message type',
        'The simulator models text and template messages only, not image.',
      ],
      [{ ...valid, type: 'text', text: {} }, 400, 100, "(#100) The parameter text['body'] is required."],
      [
        { ...valid, type: 'text', text: { body: 'x'.repeat(4097) } },
        400,
        100,
        '(#100) Invalid parameter',
        "Param text['body'] must be at most 4096 characters long.",
      ],
      [withTemplate({ language: undefined }), 400, 100, "(#100) The parameter template['language'] is required."],
      [
        withTemplate({ name: 'nope' }),
        404,
        132001,
        '(#132001) Template name does not exist in the translation',
        'template name (nope) does not exist in en_US',
      ],
      [
        withTemplate({ components: [] }),
        400,
        132000,
        '(#132000) Number of parameters does not match the expected number of params',
        'body: number of localizable_params (0) does not match the expected number of params (1)',
      ],
      [
        withTemplate({ components: [{ type: 'body', parameters: [{ type: 'text', text: '' }] }] }),
        400,
        100,
        '(#100) Invalid parameter',
        "Parameter 'text' is mandatory for component parameter type 'text'",
      ],
      [
        withTemplate({ components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ada\nL' }] }] }),
        400,
        100,
        '(#100) Invalid parameter',
        'Param text cannot have new-line/tab characters or more than 4 consecutive spaces',
      ],
      [
        withTemplate({
          components: [
            { type: 'body', parameters: [{ type: 'text', text: 'Ada' }] },
            { type: 'header', parameters: [{ type: 'text', text: 'x' }] },
          ],
        }),
        400,
        132000,
        '(#132000) Number of parameters does not match the expected number of params',
        'header: number of localizable_params (1) does not match the expected number of params (0)',
      ],
    ];
    for (const [body, status, code, message, details] of expectations) {
      const res = await post(body);
      const error: Record<string, unknown> = { message, type: 'OAuthException', code };
      if (details) error.error_data = { messaging_product: 'whatsapp', details };
      assert.deepEqual(
        { status: res.status, json: res.json },
        { status, json: { error } },
        JSON.stringify(body).slice(0, 80),
      );
      assert.equal(res.authenticate, `OAuth "Facebook Platform" "invalid_request" "${message}"`);
    }
    assert.equal(meta.sim.sends.length, 0);
  });

  it("answers unknown paths with Graph's unknown path error", async () => {
    const res = await post(valid, { path: `/v23.0/${META_SIM.phoneNumberId}/mesages` });
    assert.deepEqual(res, {
      status: 400,
      authenticate: res.authenticate,
      json: {
        error: {
          message: `Unknown path components: ${META_SIM.phoneNumberId}/mesages`,
          type: 'OAuthException',
          code: 2500,
        },
      },
    });
  });
});
