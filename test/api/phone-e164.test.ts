import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PHONE_MESSAGE } from '../../src/leads/phone.ts';
import {
  SIM_API_KEY,
  SIM_ASSISTANT_ID,
  SIM_PHONE_NUMBER_ID,
  startVapiSimulator,
  type VapiSimulator,
} from '../../src/simulators/vapi/vapi-simulator.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { getLead, postLead, validLead } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// Phones through the public API: what is dialled (Vapi's customer.number, which Vapi checks is
// E.164) and written to (WhatsApp `to`) is the E.164 number, duplicates are decided on it, GET
// shows the phone as submitted, and national numbers are completed with agent.defaultCountry.

const VAPI = {
  provider: 'vapi' as const,
  apiKey: SIM_API_KEY,
  assistantId: SIM_ASSISTANT_ID,
  phoneNumberId: SIM_PHONE_NUMBER_ID,
};

let vapi: VapiSimulator;
let h: WhatsappHarness;
let voice: { apiKey: string };
let voiceDe: { apiKey: string };

before(async () => {
  vapi = await startVapiSimulator();
  h = await startWhatsappHarness({ env: { VAPI_BASE_URL: vapi.url } });
  voice = await h.app.createWorkspace('voice', { voice: VAPI, agent: SOLAR_AGENT });
  voiceDe = await h.app.createWorkspace('voice', { voice: VAPI, agent: { ...SOLAR_AGENT, defaultCountry: 'DE' } });
});
after(async () => {
  await h.close();
  await vapi.close();
});

const dialled = () => (vapi.calls.at(-1)!.requestBody as { customer: { number: string } }).customer.number;

describe('voice: Vapi dials the E.164 number', () => {
  it(
    '0049 30 2345 6789 is dialled as +493023456789, GET shows it as ' +
      'submitted, and +49 30 2345 6789 is the same lead',
    async () => {
      const first = await postLead(h.app.http, voice.apiKey, validLead({ phone: '0049 30 2345 6789' }));
      assert.equal(first.status, 201, JSON.stringify(first.body));
      assert.equal(dialled(), '+493023456789');
      assert.equal((await getLead(h.app.http, voice.apiKey, first.body.leadId)).body.lead.phone, '0049 30 2345 6789');
      const calls = vapi.calls.length;
      for (const same of ['+49 30 2345 6789', '+49 (0)30 2345-6789', '011 49 30 23456789']) {
        const again = await postLead(h.app.http, voice.apiKey, validLead({ phone: same }));
        assert.equal(again.status, 409, same);
        assert.equal(again.body.leadId, first.body.leadId);
      }
      assert.equal(vapi.calls.length, calls, 'nobody is called twice');
    },
  );

  it('a national number is completed with agent.defaultCountry', async () => {
    const res = await postLead(h.app.http, voiceDe.apiKey, validLead({ phone: '030 2345 6788' }));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(dialled(), '+493023456788');
  });

  it("400 with the spec's message when the number cannot be possible, and nobody is called", async () => {
    const calls = vapi.calls.length;
    for (const phone of ['030 2345 6787', '+1 555 010', '+999 123 4567', '+49 30 2345 6789 1234']) {
      const res = await postLead(h.app.http, voice.apiKey, validLead({ phone }));
      assert.equal(res.status, 400, phone);
      assert.deepEqual(res.body.issues, [{ path: ['phone'], message: PHONE_MESSAGE }], phone);
    }
    const both = await postLead(h.app.http, voice.apiKey, validLead({ phone: '+1 555 010', name: '' }));
    assert.deepEqual(
      both.body.issues.map((i: { path: string[] }) => i.path[0]).sort(),
      ['name', 'phone'],
      'listed with the other bad fields',
    );
    assert.equal(vapi.calls.length, calls);
  });
});

describe('WhatsApp: the providers write to the E.164 number', () => {
  it('Twilio: a national number with defaultCountry DE', async () => {
    const w = await h.workspace('twilio', { agent: { ...SOLAR_AGENT, defaultCountry: 'DE' } });
    const { leadId } = await h.submit(w.apiKey, { phone: '030 2345 6786' });
    await h.settle();
    assert.equal(h.twilio.messages.filter((m) => m.to === '+493023456786').length, 1);
    const { rows } = await h.app.db.pool.query('SELECT phone, phone_normalized FROM leads WHERE id = $1', [leadId]);
    assert.deepEqual(rows[0], { phone: '030 2345 6786', phone_normalized: '+493023456786' });
  });

  it('a lead migration 007 marked as the same number as an older one is never written to', async () => {
    const w = await h.workspace('twilio');
    const { leadId } = await h.submit(w.apiKey, { phone: '+49 30 2345 6784' });
    // As the migration leaves the later of two leads with one number (docs/API.md).
    await h.app.db.pool.query(`UPDATE leads SET phone_normalized = phone_normalized || '#' || id WHERE id = $1`, [
      leadId,
    ]);
    const requests = h.twilio.requests.length;
    await h.settle();
    assert.equal(h.twilio.requests.length, requests, 'Twilio is not even asked');
    const { rows } = await h.app.db.pool.query(
      `SELECT output->>'outcome' AS outcome FROM pgboss.job WHERE data->>'leadId' = $1`,
      [leadId],
    );
    assert.deepEqual(
      rows.map((r) => r.outcome),
      ['phone_not_e164'],
    );
  });

  it('Meta: 0049 without a default country', async () => {
    const w = await h.workspace('meta');
    await h.submit(w.apiKey, { phone: '0049 30 2345 6785' });
    await h.settle();
    assert.equal(h.meta.sends.filter((m) => m.to === '493023456785').length, 1);
  });
});
