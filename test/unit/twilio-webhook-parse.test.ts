import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../../src/shared/errors.ts';
import {
  normalizeWhatsappAddress,
  parseTwilioForm,
  parseTwilioInbound,
  parseTwilioStatus,
} from '../../src/whatsapp/twilio/twilio-webhook-parse.ts';

const AT = new Date('2026-11-22T10:00:00.000Z');

// Shaped like a captured WhatsApp inbound body (Twilio's Messages API docs), as it arrives on the wire.
const INBOUND_RAW =
  'SmsMessageSid=SM0123456789abcdef0123456789abcdef&NumMedia=0&ProfileName=Ada+L.&MessageType=text' +
  '&SmsSid=SM0123456789abcdef0123456789abcdef' +
  '&WaId=15550001111&SmsStatus=received&Body=Ol%C3%A1%2C+yes+please+%F0%9F%91%8D' +
  '&To=whatsapp%3A%2B15557770100&NumSegments=1' +
  '&ReferralNumMedia=0&MessageSid=SM0123456789abcdef0123456789abcdef&AccountSid=AC5f0c3d9a1b7e42c8a6d0e9f1b2c3d4e5' +
  '&From=whatsapp%3A%2B15550001111&ApiVersion=2010-04-01';

function issuesOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'validation_failed');
    return (err.details.issues ?? []).map((i) => i.path.join('.'));
  }
  assert.fail('expected a validation error');
}

test('an inbound WhatsApp message becomes a message event with +digits addresses', () => {
  assert.deepEqual(parseTwilioInbound(parseTwilioForm(Buffer.from(INBOUND_RAW)), AT), {
    type: 'message',
    providerMessageId: 'SM0123456789abcdef0123456789abcdef',
    from: '+15550001111',
    to: '+15557770100',
    text: 'Olá, yes please 👍',
    receivedAt: AT,
  });
});

test('addresses are normalised: whatsapp: prefix, spaces and punctuation dropped; nonsense refused', () => {
  assert.equal(normalizeWhatsappAddress('whatsapp:+1 (555) 000-1111'), '+15550001111');
  assert.equal(normalizeWhatsappAddress('WhatsApp:+44 7700 900123'), '+447700900123');
  assert.equal(normalizeWhatsappAddress('+15550001111'), '+15550001111');
  assert.equal(normalizeWhatsappAddress('whatsapp:+123'), null);
  assert.equal(normalizeWhatsappAddress('whatsapp:+1234567890123456'), null);
  assert.equal(normalizeWhatsappAddress('messenger:12345678'), null);
  assert.equal(normalizeWhatsappAddress('whatsapp:+1555abc0001'), null);
});

test('media-only messages are described; a button tap without Body uses ButtonText; unknown fields pass', () => {
  const base = { MessageSid: 'SM1', From: 'whatsapp:+15550001111', To: 'whatsapp:+15557770100' };
  assert.equal(
    parseTwilioInbound(new URLSearchParams({ ...base, NumMedia: '1', MediaUrl0: 'https://x.test/m' }), AT).text,
    '[attachment]',
  );
  const image = { ...base, NumMedia: '1', MediaContentType0: 'image/jpeg', MediaUrl0: 'https://x.test/m', Body: '' };
  assert.equal(parseTwilioInbound(new URLSearchParams(image), AT).text, '[image]');
  assert.equal(
    parseTwilioInbound(new URLSearchParams({ ...base, Body: '', ButtonText: 'Book a call', SomethingNew: 'x' }), AT)
      .text,
    'Book a call',
  );
});

test('an inbound form missing what we need is a validation error naming the fields', () => {
  assert.deepEqual(
    issuesOf(() => parseTwilioInbound(new URLSearchParams({ Body: 'hi' }), AT)),
    ['MessageSid', 'From', 'To'],
  );
  assert.deepEqual(
    issuesOf(() =>
      parseTwilioInbound(
        new URLSearchParams({ MessageSid: 'SM1', From: 'whatsapp:nobody', To: 'whatsapp:+15557770100' }),
        AT,
      ),
    ),
    ['From'],
  );
});

test('status callbacks: tracked statuses become events with error code and message; others are dropped', () => {
  const form = (extra: Record<string, string>) =>
    new URLSearchParams({
      ChannelPrefix: 'whatsapp',
      ApiVersion: '2010-04-01',
      SmsSid: 'SM9',
      MessageSid: 'SM9',
      AccountSid: 'AC1',
      To: 'whatsapp:+15550001111',
      From: 'whatsapp:+15557770100',
      ...extra,
    });
  assert.deepEqual(parseTwilioStatus(form({ MessageStatus: 'delivered', SmsStatus: 'delivered' }), AT), {
    type: 'status',
    providerMessageId: 'SM9',
    status: 'delivered',
    at: AT,
  });
  assert.deepEqual(
    parseTwilioStatus(form({ MessageStatus: 'failed', ErrorCode: '63016', ErrorMessage: 'outside the window' }), AT),
    {
      type: 'status',
      providerMessageId: 'SM9',
      status: 'failed',
      at: AT,
      errorCode: '63016',
      errorMessage: 'outside the window',
    },
  );
  for (const status of ['queued', 'sent', 'read', 'undelivered'])
    assert.equal(parseTwilioStatus(form({ MessageStatus: status }), AT)?.status, status);
  for (const status of ['sending', 'accepted', 'scheduled', 'canceled'])
    assert.equal(parseTwilioStatus(form({ MessageStatus: status }), AT), null);
  assert.equal(parseTwilioStatus(form({ MessageStatus: 'sent', ErrorCode: '' }), AT)?.errorCode, undefined);
  assert.deepEqual(
    issuesOf(() => parseTwilioStatus(form({ MessageStatus: 'exploded' }), AT)),
    ['MessageStatus'],
  );
  assert.deepEqual(
    issuesOf(() => parseTwilioStatus(new URLSearchParams({ MessageStatus: 'sent' }), AT)),
    ['MessageSid'],
  );
});
