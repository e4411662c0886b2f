import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// A lead's WhatsApp id is not always the number on its form: Meta answers a send to a Mexican
// mobile with the id `521…` (E.164 dropped that 1), and a Brazilian account made before mobiles
// got their ninth digit keeps an id without it. The lead's replies come from that id and must
// still reach the lead (docs/WHATSAPP-META.md, "Who wrote").

let h: WhatsappHarness;

before(async () => {
  h = await startWhatsappHarness();
});
after(() => h.close());

async function inbound(leadId: string): Promise<string[]> {
  const { rows } = await h.app.db.pool.query(
    `SELECT body FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'inbound' ORDER BY id`,
    [leadId],
  );
  return rows.map((r) => r.body);
}

describe('Meta: a reply from a WhatsApp id that differs from the form number', () => {
  for (const c of [
    { country: 'Mexico, id with the 1', form: '+52 55 1234 5678', waId: '5215512345678' },
    { country: 'Brazil, id without the ninth digit', form: '+55 11 98765 4321', waId: '551187654321' },
  ]) {
    it(`${c.country}: the reply reaches the lead and is answered`, async () => {
      const w = await h.workspace('meta');
      const { leadId, phone } = await h.submit(w.apiKey, { phone: c.form });
      h.meta.setWaId(phone, c.waId);
      await h.settle();
      assert.equal(h.meta.sends.filter((s) => s.to === c.waId).length, 1, 'the first template went out');
      const sent = h.meta.sends.length;
      await h.leadSays('meta', w.slug, `+${c.waId}`, 'Yes, I own the house.');
      await h.settle();
      assert.deepEqual(await inbound(leadId), ['Yes, I own the house.']);
      assert.ok(h.meta.sends.length > sent, 'the agent answered');
      assert.equal(h.meta.sends.at(-1)!.to, c.waId);
    });
  }

  it('a lead whose number is the id itself keeps its replies', async () => {
    const w = await h.workspace('meta');
    const mobile = await h.submit(w.apiKey, { phone: '+55 11 98765 1234' });
    const old = await h.submit(w.apiKey, { phone: '+55 11 8765 1234' });
    await h.settle();
    await h.leadSays('meta', w.slug, '+551187651234', 'Hello');
    await h.settle();
    assert.deepEqual(await inbound(old.leadId), ['Hello']);
    assert.deepEqual(await inbound(mobile.leadId), []);
  });
});
