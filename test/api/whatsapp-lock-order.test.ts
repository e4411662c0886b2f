import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { CalcomClient } from '../../src/scheduling/calcom/calcom-client.ts';
import { transitionLead } from '../../src/leads/lead-state.ts';
import { DeliveryStatuses } from '../../src/whatsapp/delivery-status.ts';
import { InboundService } from '../../src/whatsapp/inbound-service.ts';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// The lock order of the WhatsApp channel (docs/WHATSAPP.md, "Lock order"), driven: for one lead,
// inbound messages, delivery statuses of its messages (failures among them, which hand the lead
// to a person) and turns run together, round after round. Every transaction takes the lead's row
// before its message and status rows; with two orders PostgreSQL finds a deadlock (40P01) here.

const ROUNDS = 25;
const TITLE = `inbound messages, delivery statuses and turns of one lead, concurrently, ${ROUNDS} rounds: no deadlock`;

let h: WhatsappHarness;

before(async () => {
  h = await startWhatsappHarness();
  // A short answer every time: no tools, so the lead stays in the conversation.
  h.chat.setPolicy(() => ({ content: 'Thanks, noted!' }));
});
after(() => h.close());

it(TITLE, async () => {
  const w = await h.workspace('twilio');
  const raw = uniquePhone();
  const phone = `+${raw.replace(/\D/g, '')}`;
  const { leadId } = await h.submit(w.apiKey, { phone: raw });
  await h.settle();
  const pool = h.app.db.pool;
  const inbound = new InboundService({ pool, log: h.app.log, statuses: new DeliveryStatuses(pool), wake: () => {} });
  const providers = defaultConversationProviders(h.app.config, {
    chat: { sleep: async () => {} },
    scheduling: new CalcomClient({ baseUrl: h.calcom.url, sleep: async () => {} }),
  });
  const engine = new TurnEngine({
    integrationLog: h.app.integrationLog,
    pool,
    log: h.app.log,
    clock: h.clock.read,
    workspaces: h.app.workspaces,
    providers,
  });

  const failures: unknown[] = [];
  const attempt = async (what: string, fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      failures.push({ what, code: (err as { code?: string }).code, message: (err as Error).message });
    }
  };
  let sent = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const { rows } = await pool.query(
      `SELECT provider_message_id FROM whatsapp_messages WHERE lead_id = $1
        AND direction = 'outbound' AND provider_message_id IS NOT NULL ORDER BY id DESC LIMIT 2`,
      [leadId],
    );
    const at = h.clock.read();
    const message = (n: number) => () =>
      inbound.receiveMessage(w.workspaceId, 'twilio', {
        type: 'message',
        providerMessageId: `SMlock${round}x${n}`,
        from: phone,
        to: h.twilio.sender,
        text: `Question ${round}.${n}`,
        receivedAt: at,
      });
    const status = (id: string, s: 'delivered' | 'read' | 'failed') => () =>
      inbound.receiveStatus(
        w.workspaceId,
        'twilio',
        { type: 'status', providerMessageId: id, status: s, ...(s === 'failed' ? { errorCode: '30008' } : {}), at },
        null,
      );
    const statuses = rows.flatMap((r, i) => [
      status(r.provider_message_id, 'delivered'),
      status(r.provider_message_id, i === 0 && round % 3 === 0 ? 'failed' : 'read'),
    ]);
    // Stored first, so the turns below claim them while the provider delivers them again (a
    // webhook retry) and the lead writes once more.
    await message(1)();
    await message(2)();
    await Promise.all([
      attempt('turn', () => engine.run(leadId)),
      attempt('message again', message(1)),
      ...statuses.map((s) => attempt('status', s)),
      attempt('message again', message(2)),
      attempt('message', message(3)),
      attempt('turn', () => engine.run(leadId)),
    ]);
    // A failed delivery handed the lead to a person: the operator hands it back, as the dashboard will.
    await transitionLead(pool, { leadId, to: 'in_conversation', actor: 'operator', event: { type: 'lead.resumed' } });
    sent = h.twilio.messages.filter((m) => m.to === phone).length;
  }
  await h.settle();
  assert.deepEqual(failures, []);
  assert.ok(sent > ROUNDS / 2, `the turns answered (${sent} messages sent)`);
});
