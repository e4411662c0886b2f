import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { answerMetaVerification, signMetaBody, verifyMetaSignature } from '../../src/whatsapp/meta/meta-signature.ts';

const SECRET = 'app-secret-0123456789';
// Meta escapes non-ASCII, so the raw bytes differ from what JSON.stringify(JSON.parse(raw)) gives.
const RAW = Buffer.from('{"object":"whatsapp_business_account","entry":[{"text":"caf\\u00e9 \\/ \\u2014"}]}');

describe('X-Hub-Signature-256', () => {
  it('is sha256= and the lowercase hex HMAC-SHA256 of the raw bytes with the app secret', () => {
    const expected = crypto.createHmac('sha256', SECRET).update(RAW).digest('hex');
    assert.equal(signMetaBody(SECRET, RAW), `sha256=${expected}`);
    assert.equal(signMetaBody(SECRET, RAW.toString('utf8')), `sha256=${expected}`);
  });

  it('verifies the signature of the exact bytes only', () => {
    const header = signMetaBody(SECRET, RAW);
    assert.equal(verifyMetaSignature(SECRET, RAW, header), true);
    assert.equal(verifyMetaSignature(SECRET, RAW, header.toUpperCase().replace('SHA256=', 'sha256=')), true);
    assert.equal(verifyMetaSignature(SECRET, RAW, ` ${header} `), true);
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(RAW.toString('utf8'))));
    assert.notDeepEqual(reserialised, RAW);
    assert.equal(verifyMetaSignature(SECRET, reserialised, header), false);
    assert.equal(verifyMetaSignature(SECRET, Buffer.concat([RAW, Buffer.from(' ')]), header), false);
    assert.equal(verifyMetaSignature('other-secret', RAW, header), false);
  });

  it('refuses missing, malformed and unprefixed headers and an empty secret', () => {
    const header = signMetaBody(SECRET, RAW);
    const hex = header.slice('sha256='.length);
    assert.equal(verifyMetaSignature(SECRET, RAW, undefined), false);
    assert.equal(verifyMetaSignature(SECRET, RAW, ''), false);
    assert.equal(verifyMetaSignature(SECRET, RAW, hex), false, 'bare hex is the Cal.com format, not Meta');
    assert.equal(verifyMetaSignature(SECRET, RAW, `sha1=${hex}`), false);
    assert.equal(verifyMetaSignature(SECRET, RAW, `sha256=${hex.slice(0, 62)}zz`), false);
    assert.equal(verifyMetaSignature(SECRET, RAW, `sha256=${hex}00`), false);
    assert.equal(verifyMetaSignature('', RAW, signMetaBody('', RAW)), false);
  });
});

describe('GET verification handshake', () => {
  const query = (overrides: Record<string, unknown> = {}) => ({
    'hub.mode': 'subscribe',
    'hub.verify_token': 'my-verify-token',
    'hub.challenge': '1158201444',
    ...overrides,
  });

  it('echoes the challenge when mode is subscribe and the token matches', () => {
    assert.deepEqual(answerMetaVerification(query(), 'my-verify-token'), { status: 200, body: '1158201444' });
    const params = new URLSearchParams('hub.mode=subscribe&hub.challenge=abc&hub.verify_token=my-verify-token');
    assert.deepEqual(answerMetaVerification(params, 'my-verify-token'), { status: 200, body: 'abc' });
  });

  it('answers 403 otherwise', () => {
    const refused = { status: 403, body: 'Forbidden' };
    assert.deepEqual(answerMetaVerification(query({ 'hub.verify_token': 'wrong' }), 'my-verify-token'), refused);
    assert.deepEqual(
      answerMetaVerification(query({ 'hub.verify_token': 'my-verify-token ' }), 'my-verify-token'),
      refused,
    );
    assert.deepEqual(answerMetaVerification(query({ 'hub.mode': 'unsubscribe' }), 'my-verify-token'), refused);
    assert.deepEqual(answerMetaVerification(query({ 'hub.challenge': undefined }), 'my-verify-token'), refused);
    assert.deepEqual(answerMetaVerification(query({ 'hub.challenge': '' }), 'my-verify-token'), refused);
    assert.deepEqual(answerMetaVerification(query({ 'hub.challenge': 'x'.repeat(513) }), 'my-verify-token'), refused);
    assert.deepEqual(
      answerMetaVerification(query({ 'hub.verify_token': ['my-verify-token', 'x'] }), 'my-verify-token'),
      refused,
    );
    assert.deepEqual(answerMetaVerification({}, 'my-verify-token'), refused);
    // No verify token configured: nobody can subscribe, not even with an empty one.
    assert.deepEqual(answerMetaVerification(query({ 'hub.verify_token': '' }), ''), refused);
    const repeated = new URLSearchParams('hub.mode=subscribe&hub.challenge=a&hub.challenge=b&hub.verify_token=t');
    assert.deepEqual(answerMetaVerification(repeated, 't'), refused);
  });
});
