import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { newWebhookSecret, signatureHeader, signWebhook, verifyWebhook } from '../src/webhooks/standard-webhooks-signature.ts';
import { RETRY_SCHEDULE_SECONDS } from '../src/webhooks/webhook-delivery-service.ts';
import { addressAllowed, urlProblem } from '../src/webhooks/webhook-url-policy.ts';

// The Standard Webhooks specification's published test vector.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('Standard Webhooks signatures', () => {
  it('reproduces the specification\'s test vector', () => {
    assert.equal(signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body), VECTOR.signature);
  });

  it('verifies the vector, and refuses a changed body, id, timestamp or secret', () => {
    const headers = { id: VECTOR.id, timestamp: String(VECTOR.timestamp), signature: VECTOR.signature };
    assert.equal(verifyWebhook(VECTOR.secret, headers, VECTOR.body, VECTOR.timestamp), true);
    assert.equal(verifyWebhook(VECTOR.secret, headers, '{"test": 2432232315}', VECTOR.timestamp), false);
    assert.equal(verifyWebhook(VECTOR.secret, { ...headers, id: 'msg_other' }, VECTOR.body, VECTOR.timestamp), false);
    assert.equal(verifyWebhook(VECTOR.secret, { ...headers, timestamp: String(VECTOR.timestamp + 1) }, VECTOR.body, VECTOR.timestamp), false);
    assert.equal(verifyWebhook(newWebhookSecret(), headers, VECTOR.body, VECTOR.timestamp), false);
    // Outside the tolerance (5 minutes): a replayed old message is refused.
    assert.equal(verifyWebhook(VECTOR.secret, headers, VECTOR.body, VECTOR.timestamp + 301), false);
  });

  it('during a rotation the header carries both signatures, space-separated, and either secret verifies', () => {
    const next = newWebhookSecret();
    const header = signatureHeader([next, VECTOR.secret], VECTOR.id, VECTOR.timestamp, VECTOR.body);
    assert.match(header, /^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    assert.equal(header.split(' ')[1], VECTOR.signature);
    for (const s of [next, VECTOR.secret]) assert.equal(verifyWebhook(s, { id: VECTOR.id, timestamp: String(VECTOR.timestamp), signature: header }, VECTOR.body, VECTOR.timestamp), true);
  });

  it('new secrets are whsec_ and 32 random bytes of base64', () => {
    const s = newWebhookSecret();
    assert.match(s, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(s.slice(6), 'base64').length, 32);
    assert.notEqual(s, newWebhookSecret());
  });
});

describe('endpoint URLs and addresses', () => {
  it('https anywhere; http only for 127.0.0.1 or localhost; nothing else', () => {
    assert.equal(urlProblem('https://hooks.example.com/x'), null);
    assert.equal(urlProblem('http://127.0.0.1:8080/x'), null);
    assert.equal(urlProblem('http://localhost:8080/x'), null);
    assert.match(urlProblem('http://hooks.example.com/x')!, /must be https/);
    assert.match(urlProblem('ftp://hooks.example.com/x')!, /must be https/);
    assert.match(urlProblem('https://user:pw@hooks.example.com/x')!, /credentials/);
    assert.match(urlProblem('not a url')!, /not a URL/);
  });

  it('live events never reach private, loopback or link-local addresses unless allowed', () => {
    const live = { livemode: true, allowPrivateNetworks: false };
    for (const a of ['10.1.2.3', '172.16.0.1', '192.168.1.1', '127.0.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:10.0.0.1', '::ffff:127.0.0.1']) {
      assert.equal(addressAllowed(a, live), false, a);
      assert.equal(addressAllowed(a, { livemode: true, allowPrivateNetworks: true }), true, a);
    }
    for (const a of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '172.32.0.1']) assert.equal(addressAllowed(a, live), true, a);
  });

  it('sandbox events may go to loopback (a local receiver), still not to the private network', () => {
    const sandbox = { livemode: false, allowPrivateNetworks: false };
    assert.equal(addressAllowed('127.0.0.1', sandbox), true);
    assert.equal(addressAllowed('::1', sandbox), true);
    assert.equal(addressAllowed('10.0.0.5', sandbox), false);
    assert.equal(addressAllowed('169.254.169.254', sandbox), false);
  });
});

test('the retry schedule: Standard Webhooks (Svix) delays first, about three days in all', () => {
  assert.deepEqual(RETRY_SCHEDULE_SECONDS.slice(0, 7), [5, 300, 1800, 7200, 18000, 36000, 36000]);
  const hours = RETRY_SCHEDULE_SECONDS.reduce((a, b) => a + b, 0) / 3600;
  assert.ok(hours > 60 && hours < 84, `${hours} h`);
});
