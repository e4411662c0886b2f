// parseMetaWebhook: Meta's webhook bodies (entries, changes, messages, statuses) into events.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseMetaWebhook } from '../../src/whatsapp/meta/meta-webhook-parse.ts';

describe('parseMetaWebhook', () => {
  const metadata = { display_phone_number: '15550783881', phone_number_id: '106540352242922' };
  const batch = {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '1',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata,
              contacts: [{ profile: { name: 'A' }, wa_id: '16505551234' }],
              messages: [
                {
                  from: '16505551234',
                  id: 'wamid.A',
                  timestamp: '1749416383',
                  type: 'text',
                  text: { body: 'Does it come in another color?' },
                },
                {
                  from: '16505551234',
                  id: 'wamid.B',
                  timestamp: '1749416384',
                  type: 'image',
                  image: { id: 'm1', mime_type: 'image/jpeg', caption: 'my office' },
                },
                { from: '16505551234', id: 'wamid.C', timestamp: '1749416385', type: 'sticker', sticker: { id: 'm2' } },
                {
                  from: '16505551234',
                  id: 'wamid.D',
                  timestamp: '1749416386',
                  type: 'button',
                  button: { payload: 'YES', text: 'Yes please' },
                },
                {
                  from: '16505551234',
                  id: 'wamid.E',
                  timestamp: '1749416387',
                  type: 'system',
                  system: { body: 'changed number' },
                },
              ],
            },
          },
          { field: 'message_template_status_update', value: { event: 'APPROVED' } },
        ],
      },
      {
        id: '2',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata,
              statuses: [
                {
                  id: 'wamid.S',
                  status: 'delivered',
                  timestamp: '1749416390',
                  recipient_id: '16505551234',
                  pricing: { billable: true },
                },
                {
                  id: 'wamid.S',
                  status: 'failed',
                  timestamp: '1749416391',
                  recipient_id: '16505551234',
                  errors: [
                    {
                      code: 131026,
                      title: 'Receiver is incapable of receiving this message',
                      message: 'Receiver is incapable of receiving this message',
                      error_data: { details: 'Message Undeliverable.' },
                    },
                  ],
                },
                { id: 'wamid.S', status: 'deleted', timestamp: '1749416392', recipient_id: '16505551234' },
              ],
            },
          },
          {
            field: 'messages',
            value: { messaging_product: 'whatsapp', metadata, errors: [{ code: 130429, title: 'Rate limit hit' }] },
          },
        ],
      },
    ],
  };

  it('turns one body with several entries, changes, messages and statuses into events in order', () => {
    const at = (s: number) => new Date(s * 1000);
    const msg = (id: string, text: string, s: number) => ({
      type: 'message',
      providerMessageId: id,
      from: '+16505551234',
      to: '106540352242922',
      text,
      receivedAt: at(s),
    });
    assert.deepEqual(parseMetaWebhook(Buffer.from(JSON.stringify(batch))), [
      msg('wamid.A', 'Does it come in another color?', 1749416383),
      msg('wamid.B', '[image] my office', 1749416384),
      msg('wamid.C', '[sticker]', 1749416385),
      msg('wamid.D', 'Yes please', 1749416386),
      { type: 'status', providerMessageId: 'wamid.S', status: 'delivered', at: at(1749416390) },
      {
        type: 'status',
        providerMessageId: 'wamid.S',
        status: 'failed',
        errorCode: '131026',
        errorMessage: 'Receiver is incapable of receiving this message: Message Undeliverable.',
        at: at(1749416391),
      },
    ]);
  });

  it("rejects bodies that are not JSON or not Meta's shape", () => {
    assert.throws(() => parseMetaWebhook('{'), { code: 'invalid_json' });
    assert.throws(() => parseMetaWebhook(JSON.stringify({ ...batch, object: 'page' })), { code: 'validation_failed' });
    const noTimestamp = structuredClone(batch);
    delete (noTimestamp.entry[0]!.changes[0]!.value as { messages: Array<{ timestamp?: string }> }).messages[0]!
      .timestamp;
    assert.throws(
      () => parseMetaWebhook(JSON.stringify(noTimestamp)),
      (err: { code: string; details: { issues: Array<{ path: string[] }> } }) => {
        assert.equal(err.code, 'validation_failed');
        assert.deepEqual(err.details.issues[0]!.path, [
          'entry',
          '0',
          'changes',
          '0',
          'value',
          'messages',
          '0',
          'timestamp',
        ]);
        return true;
      },
    );
  });
});
