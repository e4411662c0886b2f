import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// A model answer longer than a provider takes, sent through the real Twilio and Meta clients to
// their simulators: split at sentence boundaries into several messages, each within that
// provider's limit, never cut with "…" and never inside an emoji (src/agent/outbound-split.ts).

let h: WhatsappHarness;

before(async () => {
  h = await startWhatsappHarness();
});
after(() => h.close());

/** Sentences with emoji, 2,021 characters (the outside review's length). */
const sentence = (i: number) =>
  `Point ${i}: ${'👍'.repeat(i % 7)}${i % 7 ? ' ' : ''}the panels pay for themselves within a few years.`;
const sentences = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => sentence(from + i)).join(' ');
const ANSWER = `${sentences(0, 30)} Thanks for reading all of this, Ana.`;

async function answerWith(provider: 'twilio' | 'meta', text: string): Promise<string[]> {
  const w = await h.workspace(provider);
  const raw = uniquePhone();
  const { phone } = await h.submit(w.apiKey, { phone: raw });
  await h.settle();
  h.chat.setPolicy(() => ({ content: text }));
  await h.leadSays(provider, w.slug, phone, 'Tell me everything.');
  await h.settle();
  return provider === 'twilio'
    ? h.twilio.messages.filter((m) => m.to === phone && m.kind === 'text').map((m) => m.params.Body!)
    : h.meta.sends.filter((m) => `+${m.to}` === phone && m.kind === 'text').map((m) => m.text);
}

function assertWhole(parts: string[], limit: number): void {
  for (const part of parts) {
    assert.ok(part.length <= limit, `${part.length} > ${limit}`);
    assert.ok(!part.includes('\uFFFD') && !part.endsWith('…'));
  }
}

describe("a long answer reaches each provider whole, in several messages within the provider's limit", () => {
  it('the example has 2,021 characters and ends a sentence', () => {
    assert.equal(ANSWER.length, 2021, String(ANSWER.length));
  });

  it('Twilio (Body ≤ 1,600): two messages split between sentences, nothing lost', async () => {
    const parts = await answerWith('twilio', ANSWER);
    assert.equal(parts.length, 2);
    assertWhole(parts, 1600);
    assert.match(parts[0]!, /years\.$/);
    assert.equal(parts.join(' '), ANSWER);
  });

  it('Meta (text.body ≤ 4,096): the 2,021 characters arrive unchanged, in one message', async () => {
    assert.deepEqual(await answerWith('meta', ANSWER), [ANSWER]);
  });

  it('Meta: a longer answer is split at a sentence boundary within 4,096', async () => {
    const long = sentences(0, 80);
    assert.ok(long.length > 4096);
    const parts = await answerWith('meta', long);
    assert.equal(parts.length, 2);
    assertWhole(parts, 4096);
    assert.equal(parts.join(' '), long);
  });

  it('Twilio: one sentence longer than the limit is split between words, every emoji whole', async () => {
    const words = Array.from({ length: 300 }, (_, i) => `word${i}${'👍'.repeat(i % 3)}`).join(' ');
    assert.ok(words.length > 1600);
    const parts = await answerWith('twilio', words);
    assert.ok(parts.length >= 2);
    assertWhole(parts, 1600);
    assert.equal(parts.join(' '), words);
  });
});
