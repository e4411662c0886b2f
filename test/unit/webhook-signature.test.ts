import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import {
  newWebhookSecret,
  signatureHeader,
  signWebhook,
  verifyWebhook,
} from '../../src/webhooks/standard-webhooks-signature.ts';
import { RETRY_SCHEDULE_SECONDS } from '../../src/webhooks/webhook-delivery-service.ts';
import { addressAllowed, classifyAddress, webhookUrlProblem } from '../../src/shared/egress-policy.ts';

// The Standard Webhooks specification's published test vector.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('Standard Webhooks signatures', () => {
  it("reproduces the specification's test vector", () => {
    assert.equal(signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body), VECTOR.signature);
  });

  it('verifies the vector, and refuses a changed body, id, timestamp or secret', () => {
    const headers = { id: VECTOR.id, timestamp: String(VECTOR.timestamp), signature: VECTOR.signature };
    assert.equal(verifyWebhook(VECTOR.secret, headers, VECTOR.body, VECTOR.timestamp), true);
    assert.equal(verifyWebhook(VECTOR.secret, headers, '{"test": 2432232315}', VECTOR.timestamp), false);
    assert.equal(verifyWebhook(VECTOR.secret, { ...headers, id: 'msg_other' }, VECTOR.body, VECTOR.timestamp), false);
    assert.equal(
      verifyWebhook(
        VECTOR.secret,
        { ...headers, timestamp: String(VECTOR.timestamp + 1) },
        VECTOR.body,
        VECTOR.timestamp,
      ),
      false,
    );
    assert.equal(verifyWebhook(newWebhookSecret(), headers, VECTOR.body, VECTOR.timestamp), false);
    // Outside the tolerance (5 minutes): a replayed old message is refused.
    assert.equal(verifyWebhook(VECTOR.secret, headers, VECTOR.body, VECTOR.timestamp + 301), false);
  });

  it('during a rotation the header carries both signatures, space-separated, and either secret verifies', () => {
    const next = newWebhookSecret();
    const header = signatureHeader([next, VECTOR.secret], VECTOR.id, VECTOR.timestamp, VECTOR.body);
    assert.match(header, /^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    assert.equal(header.split(' ')[1], VECTOR.signature);
    for (const s of [next, VECTOR.secret])
      assert.equal(
        verifyWebhook(
          s,
          { id: VECTOR.id, timestamp: String(VECTOR.timestamp), signature: header },
          VECTOR.body,
          VECTOR.timestamp,
        ),
        true,
      );
  });

  it('new secrets are whsec_ and 32 random bytes of base64', () => {
    const s = newWebhookSecret();
    assert.match(s, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(s.slice(6), 'base64').length, 32);
    assert.notEqual(s, newWebhookSecret());
  });
});

describe('endpoint URLs and addresses (src/shared/egress-policy.ts)', () => {
  const closed = { allowPrivateNetworks: false };
  const open = { allowPrivateNetworks: true };

  it('https to a public host; http only for this machine and only when the operator allows private networks', () => {
    assert.equal(webhookUrlProblem('https://hooks.example.com/x', closed), null);
    for (const url of [
      'http://127.0.0.1:8080/x',
      'http://localhost:8080/x',
      'http://[::1]:8080/x',
      'http://2130706433:8080/x',
    ]) {
      assert.match(webhookUrlProblem(url, closed)!, /must be https/, url);
      assert.equal(webhookUrlProblem(url, open), null, url);
    }
    assert.match(webhookUrlProblem('http://10.0.0.5/x', open)!, /must be https/);
    assert.match(webhookUrlProblem('http://hooks.example.com/x', closed)!, /must be https/);
    assert.match(webhookUrlProblem('ftp://hooks.example.com/x', closed)!, /must be https/);
    assert.match(webhookUrlProblem('https://user:pw@hooks.example.com/x', closed)!, /credentials/);
    assert.match(webhookUrlProblem('not a url', closed)!, /not a URL/);
  });

  it('every spelling of a loopback or private host is refused when saved', () => {
    const spellings = [
      'https://localhost/x',
      'https://LOCALHOST./x',
      'https://api.localhost/x',
      'https://127.0.0.1/x',
      'https://2130706433/x',
      'https://0x7f000001/x',
      'https://0177.0.0.1/x',
      'https://127.1/x',
      'https://0/x',
      'https://[::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://10.0.0.1/x',
      'https://192.168.1.1/x',
      'https://100.64.0.1/x',
      'https://[fd00::1]/x',
      'https://[fe80::1]/x',
    ];
    for (const url of spellings) {
      assert.match(webhookUrlProblem(url, closed)!, /private, loopback or link-local/, url);
      assert.equal(webhookUrlProblem(url, open), null, url);
    }
  });

  it(
    'IPv6 that carries or tunnels IPv4, ' +
      'multicast and metadata addresses are refused even when private networks are allowed',
    () => {
      for (const url of [
        'https://[::7f00:1]/x',
        'https://[::a9fe:a9fe]/x',
        'https://[64:ff9b::7f00:1]/x',
        'https://[64:ff9b::a9fe:a9fe]/x',
        'https://[2002:7f00:1::]/x',
        'https://[2001:0:4136:e378::1]/x',
        'https://[ff02::1]/x',
        'https://[fd00:ec2::254]/x',
        'https://169.254.169.254/x',
        'https://[::ffff:169.254.169.254]/x',
        'https://224.0.0.1/x',
        'https://255.255.255.255/x',
      ]) {
        assert.ok(webhookUrlProblem(url, closed), url);
        assert.match(webhookUrlProblem(url, open)!, /never allowed/, url);
      }
    },
  );

  it('addresses: public ones always; private ones only with the switch', () => {
    for (const a of [
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '127.0.0.1',
      '169.254.1.1',
      '100.64.0.1',
      '0.0.0.0',
      '::',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:10.0.0.1',
      '::ffff:127.0.0.1',
      '2001:db8::1',
    ]) {
      assert.equal(classifyAddress(a), 'private', a);
      assert.equal(addressAllowed(a, closed), false, a);
      assert.equal(addressAllowed(a, open), true, a);
    }
    for (const a of [
      '93.184.216.34',
      '2606:2800:220:1:248:1893:25c8:1946',
      '172.32.0.1',
      '::ffff:93.184.216.34',
      '64:ff9b::5db8:d822',
    ]) {
      assert.equal(addressAllowed(a, closed), true, a);
    }
    for (const a of ['169.254.169.254', '::7f00:1', '2002:a9fe:a9fe::1', '64:ff9b::a9fe:a9fe', 'ff02::1'])
      assert.equal(addressAllowed(a, open), false, a);
  });
});

test('the retry schedule: Standard Webhooks (Svix) delays first, about three days in all', () => {
  assert.deepEqual(RETRY_SCHEDULE_SECONDS.slice(0, 7), [5, 300, 1800, 7200, 18000, 36000, 36000]);
  const hours = RETRY_SCHEDULE_SECONDS.reduce((a, b) => a + b, 0) / 3600;
  assert.ok(hours > 60 && hours < 84, `${hours} h`);
});
