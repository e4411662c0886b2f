import { META_SIM } from '../../src/simulators/meta/meta-simulator.ts';
import { signMetaBody } from '../../src/whatsapp/meta/meta-signature.ts';
import { computeTwilioSignature } from '../../src/whatsapp/twilio/twilio-signature.ts';
import type { WhatsappHarness } from './whatsapp-harness.ts';

// Inbound messages of any shape (media, locations, odd text) posted to the real webhook routes,
// signed as Twilio and Meta sign them: for what the simulators' leads do not send.

let seq = 0;

/** Posts a Twilio inbound form from `phone` with `fields` (Body, NumMedia, Latitude, …); answers the HTTP status. */
export async function twilioSays(
  h: WhatsappHarness,
  slug: string,
  phone: string,
  fields: Record<string, string>,
): Promise<number> {
  const id = `SM${String(++seq).padStart(32, '0')}`;
  const params: Record<string, string> = {
    MessageSid: id,
    SmsSid: id,
    AccountSid: h.twilio.accountSid,
    From: `whatsapp:${phone}`,
    To: `whatsapp:${h.twilio.sender}`,
    NumMedia: '0',
    ProfileName: 'Ada',
    WaId: phone.slice(1),
    ...fields,
  };
  const url = `${h.baseUrl}/api/whatsapp/twilio/${slug}/inbound`;
  const signature = computeTwilioSignature(h.twilio.authToken, url, params);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    body: new URLSearchParams(params).toString(),
  });
  await res.text();
  return res.status;
}

/** Posts one Meta message (`type` and its object, e.g. `{ type: 'image', image: {…} }`) from `phone`. */
export async function metaSays(
  h: WhatsappHarness,
  slug: string,
  phone: string,
  message: Record<string, unknown>,
): Promise<number> {
  const timestamp = String(Math.floor(h.clock.read().getTime() / 1000));
  const body = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'waba-test',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550100', phone_number_id: META_SIM.phoneNumberId },
              messages: [{ from: phone.slice(1), id: `wamid.test${++seq}`, timestamp, ...message }],
            },
          },
        ],
      },
    ],
  });
  const signature = signMetaBody(META_SIM.appSecret, body);
  const res = await fetch(`${h.baseUrl}/api/whatsapp/meta/${slug}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
    body,
  });
  await res.text();
  return res.status;
}
