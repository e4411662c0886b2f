import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SecretBox } from '../../src/workspaces/secret-box.ts';

const key = crypto.randomBytes(32);
const box = new SecretBox(key);
const settings = {
  voice: { provider: 'vapi', apiKey: 'vapi-private-key-5d1f0a', assistantId: 'asst-1', phoneNumberId: 'pn-1' },
};
const A = crypto.randomUUID();
const B = crypto.randomUUID();

describe('SecretBox', () => {
  it('round-trips a value and hides the plaintext', () => {
    const blob = box.seal(settings, A);
    assert.deepEqual(box.open(blob, A), settings);
    assert.ok(!blob.includes(settings.voice.apiKey));
    assert.ok(!blob.includes('vapi'));
    // version byte + 12-byte IV + 16-byte tag + the JSON's length
    assert.equal(blob.length, 1 + 12 + 16 + Buffer.byteLength(JSON.stringify(settings)));
    assert.deepEqual(box.open(box.seal('plain', A), A), 'plain');
  });

  it('uses a fresh IV: sealing twice gives different blobs', () => {
    assert.notDeepEqual(box.seal(settings, A), box.seal(settings, A));
  });

  it('a blob bound to workspace A does not open for workspace B', () => {
    const blob = box.seal(settings, A);
    assert.throws(() => box.open(blob, B));
    assert.throws(() => box.open(blob, ''));
    assert.deepEqual(box.open(blob, A), settings, 'still opens for A');
  });

  it('any flipped byte fails authentication', () => {
    const blob = box.seal(settings, A);
    // version, IV, tag and body positions
    for (const i of [0, 1, 12, 13, 28, 29, blob.length - 1]) {
      const tampered = Buffer.from(blob);
      tampered[i] = tampered[i]! ^ 0x01;
      assert.throws(() => box.open(tampered, A), `byte ${i}`);
    }
    assert.throws(() => box.open(blob.subarray(0, blob.length - 1), A), 'truncated');
  });

  it('the wrong key fails', () => {
    const blob = box.seal(settings, A);
    assert.throws(() => new SecretBox(crypto.randomBytes(32)).open(blob, A));
    const almost = Buffer.from(key);
    almost[31] = almost[31]! ^ 0x80;
    assert.throws(() => new SecretBox(almost).open(blob, A));
  });

  it('rejects keys that are not 32 bytes', () => {
    assert.throws(() => new SecretBox(crypto.randomBytes(16)), /32 bytes/);
    assert.throws(() => new SecretBox(Buffer.alloc(0)), /32 bytes/);
  });
});
