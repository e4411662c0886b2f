import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ChatMessage } from '../../src/agent/chat-model.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness, type WhatsappProvider } from '../helpers/whatsapp-harness.ts';
import { metaSays, twilioSays } from '../helpers/whatsapp-inbound.ts';

// Media through the signed webhooks: what the lead sent is described in words, its caption kept,
// stored so, read by the model as the lead's message, and shown the same on the dashboard.

let h: WhatsappHarness;
const ws: Partial<Record<WhatsappProvider, { slug: string; apiKey: string; workspaceId: string }>> = {};
let session: AdminSession;

before(async () => {
  h = await startWhatsappHarness();
  ws.twilio = await h.workspace('twilio');
  ws.meta = await h.workspace('meta');
  const memberships = [ws.twilio, ws.meta].map((w) => ({ workspaceId: w.workspaceId, role: 'agent' as const }));
  const op = await makeOperator(h.app, memberships);
  session = (await signIn(h.app.http, op.email, op.password)).session!;
});
after(() => h.close());

async function leadWithTemplate(provider: WhatsappProvider): Promise<{ leadId: string; phone: string }> {
  const raw = uniquePhone();
  const { leadId } = await h.submit(ws[provider]!.apiKey, { phone: raw });
  await h.settle();
  return { leadId, phone: `+${raw.replace(/\D/g, '')}` };
}

/** The stored text, the model's user message and the dashboard's text all say `expected`. */
async function assertSeenAs(provider: WhatsappProvider, leadId: string, expected: string): Promise<void> {
  await h.settle();
  const { rows } = await h.app.db.pool.query(
    `SELECT body FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'inbound'`,
    [leadId],
  );
  assert.deepEqual(
    rows.map((r) => r.body),
    [expected],
  );
  const userMessages = h.chat.requests.flatMap((r) =>
    (r.body as { messages: ChatMessage[] }).messages.filter((m) => m.role === 'user'),
  );
  assert.ok(
    userMessages.some((m) => m.content === expected),
    `the model read ${JSON.stringify(expected)}`,
  );
  const page = await admin(h.app.http, session, 'GET', `/api/admin/workspaces/${ws[provider]!.slug}/leads/${leadId}`);
  assert.equal(page.status, 200);
  const shown = page.body.messages as Array<{ direction: string; body: string }>;
  assert.ok(
    shown.some((m) => m.direction === 'inbound' && m.body === expected),
    'the dashboard shows the same text',
  );
}

describe('Twilio media', () => {
  const url = 'https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1';
  const media = (type: string) => ({ NumMedia: '1', MediaContentType0: type, MediaUrl0: url });
  const cases: Array<[string, Record<string, string>, string]> = [
    ['an image with its caption', { ...media('image/jpeg'), Body: 'This is my roof' }, '[image] This is my roof'],
    ['a voice note', { ...media('audio/ogg'), Body: '' }, '[voice note, not transcribed]'],
    ['a video', { ...media('video/mp4') }, '[video]'],
    ['a PDF', { ...media('application/pdf'), Body: 'my last bill' }, '[document] my last bill'],
    [
      'a location with its label and address',
      { Latitude: '52.52', Longitude: '13.405', Label: 'Our house', Address: 'Unter den Linden 1, Berlin', Body: '' },
      '[location: 52.5200, 13.4050 — Our house, Unter den Linden 1, Berlin]',
    ],
  ];
  for (const [what, fields, expected] of cases) {
    it(`${what} reaches the model and the dashboard as ${JSON.stringify(expected)}`, async () => {
      const { leadId, phone } = await leadWithTemplate('twilio');
      assert.equal(await twilioSays(h, ws.twilio!.slug, phone, fields), 200);
      await assertSeenAs('twilio', leadId, expected);
    });
  }
});

describe('Meta media', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    [
      'an image with its caption',
      { type: 'image', image: { id: 'm1', mime_type: 'image/jpeg', caption: 'My roof' } },
      '[image] My roof',
    ],
    [
      'a voice note',
      { type: 'audio', audio: { id: 'm2', mime_type: 'audio/ogg; codecs=opus', voice: true } },
      '[voice note, not transcribed]',
    ],
    ['an audio file', { type: 'audio', audio: { id: 'm3', mime_type: 'audio/mpeg' } }, '[audio file, not transcribed]'],
    [
      'a document with its name and caption',
      { type: 'document', document: { id: 'm4', filename: 'bill [march].pdf', caption: 'here' } },
      '[document: bill (march).pdf] here',
    ],
    [
      'a location',
      { type: 'location', location: { latitude: 52.52, longitude: 13.405, name: 'Our house', address: 'Linden 1' } },
      '[location: 52.5200, 13.4050 — Our house, Linden 1]',
    ],
    ['a sticker', { type: 'sticker', sticker: { id: 'm5', mime_type: 'image/webp' } }, '[sticker]'],
  ];
  for (const [what, message, expected] of cases) {
    it(`${what} reaches the model and the dashboard as ${JSON.stringify(expected)}`, async () => {
      const { leadId, phone } = await leadWithTemplate('meta');
      assert.equal(await metaSays(h, ws.meta!.slug, phone, message), 200);
      await assertSeenAs('meta', leadId, expected);
    });
  }
});
