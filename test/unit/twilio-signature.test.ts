import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  computeTwilioSignature,
  twilioSignedString,
  twilioWebhookUrl,
  verifyTwilioSignature,
} from '../../src/whatsapp/twilio/twilio-signature.ts';

// The example from Twilio's security docs (TwilioDevEd/api-snippets
// security/signature_validation): token, URL, parameters and the header Twilio sent.
const DOC_TOKEN = '12345';
const DOC_URL = 'https://mycompany.com/myapp.php?foo=1&bar=2';
const DOC_PARAMS = {
  CallSid: 'CA1234567890ABCDE',
  Caller: '+14158675309',
  Digits: '1234',
  From: '+14158675309',
  To: '+18005551212',
};
const DOC_SIGNATURE = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';

test("Twilio's documented example signs to its documented header", () => {
  assert.equal(
    twilioSignedString(DOC_URL, DOC_PARAMS),
    'https://mycompany.com/myapp.php?foo=1&bar=2' +
      'CallSidCA1234567890ABCDECaller+14158675309Digits1234From+14158675309To+18005551212',
  );
  assert.equal(computeTwilioSignature(DOC_TOKEN, DOC_URL, DOC_PARAMS), DOC_SIGNATURE);
  assert.equal(verifyTwilioSignature(DOC_TOKEN, DOC_URL, DOC_PARAMS, DOC_SIGNATURE), true);
});

test('parameter order does not matter; URLSearchParams and records sign the same', () => {
  const shuffled = new URLSearchParams([
    ['To', '+18005551212'],
    ['Digits', '1234'],
    ['From', '+14158675309'],
    ['Caller', '+14158675309'],
    ['CallSid', 'CA1234567890ABCDE'],
  ]);
  assert.equal(computeTwilioSignature(DOC_TOKEN, DOC_URL, shuffled), DOC_SIGNATURE);
});

test('anything changed fails: token, URL, query, a value, an extra or missing parameter', () => {
  const ok = (token: string, url: string, params: Record<string, string>, header: string | undefined = DOC_SIGNATURE) =>
    verifyTwilioSignature(token, url, params, header);
  assert.equal(ok('54321', DOC_URL, DOC_PARAMS), false);
  assert.equal(ok(DOC_TOKEN, 'https://mycompany.com/myapp.php?foo=1&bar=3', DOC_PARAMS), false);
  assert.equal(ok(DOC_TOKEN, 'https://mycompany.com/myapp.php', DOC_PARAMS), false);
  assert.equal(ok(DOC_TOKEN, 'http://mycompany.com/myapp.php?foo=1&bar=2', DOC_PARAMS), false);
  assert.equal(ok(DOC_TOKEN, DOC_URL, { ...DOC_PARAMS, Digits: '1235' }), false);
  assert.equal(
    ok(DOC_TOKEN, DOC_URL, { ...DOC_PARAMS, Body: '' }),
    false,
    'an empty extra parameter still adds its name',
  );
  const { Digits: _, ...withoutDigits } = DOC_PARAMS;
  assert.equal(ok(DOC_TOKEN, DOC_URL, withoutDigits), false);
});

test('header edge cases: missing, empty, truncated, other case; an empty token never verifies', () => {
  assert.equal(verifyTwilioSignature(DOC_TOKEN, DOC_URL, DOC_PARAMS, undefined), false);
  assert.equal(verifyTwilioSignature(DOC_TOKEN, DOC_URL, DOC_PARAMS, ''), false);
  assert.equal(verifyTwilioSignature(DOC_TOKEN, DOC_URL, DOC_PARAMS, DOC_SIGNATURE.slice(0, -1)), false);
  assert.equal(verifyTwilioSignature(DOC_TOKEN, DOC_URL, DOC_PARAMS, DOC_SIGNATURE.toLowerCase()), false);
  assert.equal(
    verifyTwilioSignature(DOC_TOKEN, DOC_URL, DOC_PARAMS, ` ${DOC_SIGNATURE} `),
    true,
    'surrounding whitespace is ignored',
  );
  const signedWithEmpty = computeTwilioSignature('', DOC_URL, DOC_PARAMS);
  assert.equal(verifyTwilioSignature('', DOC_URL, DOC_PARAMS, signedWithEmpty), false);
});

test('the default port may or may not be part of the signed URL', () => {
  const withPort = 'https://mycompany.com:443/myapp.php?foo=1&bar=2';
  assert.equal(verifyTwilioSignature(DOC_TOKEN, withPort, DOC_PARAMS, DOC_SIGNATURE), true);
  const signedWithPort = computeTwilioSignature(DOC_TOKEN, withPort, DOC_PARAMS);
  assert.notEqual(signedWithPort, DOC_SIGNATURE);
  assert.equal(verifyTwilioSignature(DOC_TOKEN, DOC_URL, DOC_PARAMS, signedWithPort), true);
  // Only the scheme's default port: another port is another URL.
  const other = computeTwilioSignature(DOC_TOKEN, 'https://mycompany.com:8443/myapp.php?foo=1&bar=2', DOC_PARAMS);
  assert.equal(verifyTwilioSignature(DOC_TOKEN, DOC_URL, DOC_PARAMS, other), false);
  const http80 = computeTwilioSignature(DOC_TOKEN, 'http://example.test:80/hook', {});
  assert.equal(verifyTwilioSignature(DOC_TOKEN, 'http://example.test/hook', {}, http80), true);
});

test('repeated parameter names: each distinct value, values sorted', () => {
  const params = new URLSearchParams([
    ['MediaUrl', 'https://b.test/2'],
    ['Body', 'hi'],
    ['MediaUrl', 'https://a.test/1'],
    ['MediaUrl', 'https://b.test/2'],
  ]);
  assert.equal(
    twilioSignedString('https://x.test/h', params),
    'https://x.test/hBodyhiMediaUrlhttps://a.test/1MediaUrlhttps://b.test/2',
  );
  const asRecord = { Body: 'hi', MediaUrl: ['https://a.test/1', 'https://b.test/2'] };
  assert.equal(
    computeTwilioSignature('t', 'https://x.test/h', params),
    computeTwilioSignature('t', 'https://x.test/h', asRecord),
  );
});

test('values are signed as decoded text (UTF-8), not as they were percent-encoded on the wire', () => {
  const wire = new URLSearchParams('Body=Ol%C3%A1+%F0%9F%91%8D&From=whatsapp%3A%2B15551234567');
  const signature = computeTwilioSignature('tok', 'https://x.test/h', {
    Body: 'Olá 👍',
    From: 'whatsapp:+15551234567',
  });
  assert.equal(verifyTwilioSignature('tok', 'https://x.test/h', wire, signature), true);
});

test('twilioWebhookUrl joins PUBLIC_BASE_URL and the request path with its query unchanged', () => {
  assert.equal(
    twilioWebhookUrl('https://leads.example.com', '/api/whatsapp/twilio/acme/inbound'),
    'https://leads.example.com/api/whatsapp/twilio/acme/inbound',
  );
  assert.equal(
    twilioWebhookUrl('https://leads.example.com/', '/api/whatsapp/twilio/acme/status?outboundKey=a%3Ab'),
    'https://leads.example.com/api/whatsapp/twilio/acme/status?outboundKey=a%3Ab',
  );
  assert.equal(twilioWebhookUrl('https://example.com/prefix', 'api/x'), 'https://example.com/prefix/api/x');
});
