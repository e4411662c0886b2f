import type { Config } from '../../config/config.ts';
import { MetaWhatsAppClient } from '../../whatsapp/meta/meta-client.ts';
import { TwilioClient } from '../../whatsapp/twilio/twilio-client.ts';
import type { WhatsappSettings } from '../workspace-config.ts';
import { otherFailure, type VerifyLine } from './verify-line.ts';

// `workspace verify` for the WhatsApp provider: Twilio (account credentials, then the sender among
// the account's phone numbers) or Meta's Cloud API (the token, then the phone-number id).

/**
 * Twilio's shared "Sandbox for WhatsApp" sender: not a number of any account, so the phone-number
 * list cannot confirm it, yet it is a valid sender for phones that joined the sandbox.
 */
export const TWILIO_WHATSAPP_SANDBOX_SENDER = '+14155238886';

export async function verifyWhatsapp(settings: WhatsappSettings, config: Config): Promise<VerifyLine[]> {
  return settings.provider === 'twilio' ? verifyTwilio(settings, config) : verifyMeta(settings, config);
}

async function verifyTwilio(
  s: Extract<WhatsappSettings, { provider: 'twilio' }>,
  config: Config,
): Promise<VerifyLine[]> {
  const client = new TwilioClient({
    baseUrl: config.TWILIO_BASE_URL,
    accountSid: s.accountSid,
    authToken: s.authToken,
    from: s.from,
    templateContentSid: s.templateContentSid,
    timeoutMs: config.WHATSAPP_TIMEOUT_MS,
  });
  const line = (check: string, ok: boolean, note: string): VerifyLine => ({ provider: 'Twilio', check, ok, note });
  const account = await client.fetchAccount();
  if (!account.ok) {
    const note =
      account.httpStatus === 401
        ? 'the account SID or auth token is wrong (401): check whatsapp.accountSid and whatsapp.authToken'
        : account.httpStatus === 404
          ? `account ${s.accountSid} not found (404): check whatsapp.accountSid`
          : otherFailure('Twilio', account, 'whatsapp.accountSid and whatsapp.authToken');
    return [line('credentials', false, note), line('sender', false, 'not checked (credentials not accepted)')];
  }
  const credentials =
    account.value.status === 'active'
      ? line('credentials', true, `account ${s.accountSid} is active`)
      : line(
          'credentials',
          false,
          `account ${s.accountSid} is ${account.value.status}: ` +
            'nothing can be sent until it is active again (Twilio Console)',
        );
  const number = await client.hasIncomingNumber(s.from);
  let sender: VerifyLine;
  if (!number.ok) sender = line('sender', false, otherFailure('Twilio', number, 'whatsapp.from'));
  else if (number.value.found) sender = line('sender', true, `${s.from} is a phone number of the account`);
  else if (s.from === TWILIO_WHATSAPP_SANDBOX_SENDER)
    sender = line(
      'sender',
      true,
      `${s.from} is Twilio's WhatsApp sandbox number: only phones that joined the sandbox get messages`,
    );
  else
    sender = line(
      'sender',
      false,
      `${s.from} is not a phone number of this Twilio account: ` +
        "check whatsapp.from (the account's WhatsApp sender, +digits)",
    );
  return [credentials, sender];
}

async function verifyMeta(s: Extract<WhatsappSettings, { provider: 'meta' }>, config: Config): Promise<VerifyLine[]> {
  const client = new MetaWhatsAppClient({
    baseUrl: config.WHATSAPP_GRAPH_BASE_URL,
    accessToken: s.accessToken,
    phoneNumberId: s.phoneNumberId,
    templateName: s.templateName,
    templateLanguage: s.templateLanguage,
    timeoutMs: config.WHATSAPP_TIMEOUT_MS,
  });
  const line = (check: string, ok: boolean, note: string): VerifyLine => ({ provider: 'Meta', check, ok, note });
  const r = await client.getPhoneNumber();
  if (r.ok) {
    const name = r.value.verifiedName ? ` (${r.value.verifiedName})` : '';
    return [
      line('access token', true, 'accepted by Meta'),
      line('phone number', true, `${s.phoneNumberId} is ${r.value.displayPhoneNumber}${name}`),
    ];
  }
  // Graph: 190 = the token is invalid or expired (HTTP 401); 100 = an object the token cannot load.
  if (r.httpStatus === 401 || r.code === '190') {
    return [
      line(
        'access token',
        false,
        `Meta rejected the access token (${r.httpStatus ?? 401}${r.code ? `, code ${r.code}` : ''}): ` +
          'check whatsapp.accessToken (a system-user token with whatsapp_business_messaging)',
      ),
      line('phone number', false, 'not checked (access token rejected)'),
    ];
  }
  if (r.code === '100' || r.httpStatus === 404) {
    return [
      line('access token', true, 'accepted by Meta'),
      line(
        'phone number',
        false,
        `${s.phoneNumberId} not found or not visible to this token ` +
          `(${r.httpStatus}${r.code ? `, code ${r.code}` : ''}): ` +
          "check whatsapp.phoneNumberId (WhatsApp Manager → API Setup) and the token's access to it",
      ),
    ];
  }
  return [
    line('access token', false, otherFailure('Meta', r, 'whatsapp.accessToken')),
    line('phone number', false, 'not checked'),
  ];
}
