import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { uniquePhone } from './helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from './helpers/whatsapp-harness.ts';

// A model answer longer than a provider takes, sent through the real Twilio and Meta clients to
// their simulators: cut on a grapheme boundary within that provider's limit, never inside an emoji.

let h: WhatsappHarness;

before(async () => {
  h = await startWhatsappHarness();
});
after(() => h.close());

/** The outside review's example: 2,021 characters, 1,590 × "a", 30 × 👍, then text. */
const ANSWER = `${'a'.repeat(1590)}${'👍'.repeat(30)}${' and that is all there is to it'.repeat(13).slice(0, 400)}.`;

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

describe("a long answer reaches each provider whole up to a grapheme, within the provider's limit", () => {
  it('the example has 2,021 characters', () => {
    assert.equal([...ANSWER].length, 2021);
  });

  it('Twilio (Body ≤ 1,600): cut after the last whole 👍 that fits, then …', async () => {
    const [body] = await answerWith('twilio', ANSWER);
    assert.ok(body);
    assert.equal(body, `${'a'.repeat(1590)}${'👍'.repeat(4)}…`);
    assert.ok(!body.includes('\uFFFD'));
    assert.ok([...body].length <= 1600);
  });

  it('Meta (text.body ≤ 4,096): the 2,021 characters arrive unchanged', async () => {
    const [text] = await answerWith('meta', ANSWER);
    assert.equal(text, ANSWER);
  });

  it('Meta: a longer answer is cut at 4,096 on a grapheme boundary', async () => {
    const long = `${'b'.repeat(4090)}${'👍'.repeat(10)}`;
    const [text] = await answerWith('meta', long);
    assert.equal(text, `${'b'.repeat(4090)}${'👍'.repeat(2)}…`);
    assert.ok(!text!.includes('\uFFFD'));
  });
});
