import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { retryDeadTurns } from '../../src/jobs/dead-letters.ts';
import { leadEvents, SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { getLead, uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';
import { eventually } from '../helpers/worker-process.ts';

// A live WhatsApp lead of a workspace without a `whatsapp` section does not sit in `new` for ever:
// it goes to needs_human with the reason on its timeline, the worker's warn line names the job,
// and once the settings are added, `jobs retry` with that id sends the first message.

let h: WhatsappHarness;

before(async () => {
  h = await startWhatsappHarness({ startRelay: true });
  await h.worker.start(); // pg-boss's own worker: only it moves a job to the dead-letter queue
});
after(() => h.close());

test(
  'no whatsapp section: needs_human, the reason on the timeline, a warn ' +
    'line with the job id; jobs retry sends it once configured',
  async () => {
    const ws = await h.app.createWorkspace('whatsapp', { agent: SOLAR_AGENT });
    const raw = uniquePhone();
    const phone = `+${raw.replace(/\D/g, '')}`;
    const { leadId } = await h.submit(ws.apiKey, { phone: raw });

    const lead = await eventually(
      'needs_human',
      async () => {
        const res = await getLead(h.app.http, ws.apiKey, leadId);
        return res.body.lead.status === 'needs_human' ? res.body.lead : undefined;
      },
      30_000,
    );
    assert.equal(lead.status, 'needs_human');
    const escalated = (await leadEvents(h.app.db.pool, leadId)).find((e) => e.type === 'conversation.escalated');
    assert.equal(escalated?.data.outcome, 'whatsapp_not_configured');
    assert.match(String(escalated?.data.reason), /no whatsapp section[\s\S]*workspace update/);

    const line = await eventually(
      'the warn line',
      async () =>
        h.app.logs
          .map((l) => JSON.parse(l))
          .find((l) => l.level === 40 && l.leadId === leadId && /jobs retry/.test(l.msg)),
      30_000,
    );
    assert.match(line.msg, new RegExp(`leadintake jobs retry ${line.jobId}$`));
    assert.equal(h.twilio.messages.filter((m) => m.to === phone).length, 0);

    await h.app.workspaces.update(ws.slug, {
      whatsapp: {
        provider: 'twilio',
        accountSid: h.twilio.accountSid,
        authToken: h.twilio.authToken,
        from: h.twilio.sender,
        templateContentSid: h.twilio.templateSid,
      },
    });
    // The id from the log line (the original job's), as an operator would paste it.
    await eventually(
      'the dead letter',
      async () => ((await retryDeadTurns(h.app.boss, [line.jobId])) === 1 ? true : undefined),
      30_000,
    );
    await eventually(
      'the first message',
      async () => (h.twilio.messages.some((m) => m.to === phone) ? true : undefined),
      30_000,
    );
    const resumed = await eventually(
      'in_conversation',
      async () => {
        const res = await getLead(h.app.http, ws.apiKey, leadId);
        return res.body.lead.status === 'in_conversation' ? res.body.lead : undefined;
      },
      30_000,
    );
    assert.equal(resumed.status, 'in_conversation');
    const sent = (await leadEvents(h.app.db.pool, leadId)).find((e) => e.type === 'message.sent');
    assert.deepEqual(
      [sent?.data.from, sent?.data.to, sent?.data.resumedAfter],
      ['needs_human', 'in_conversation', 'whatsapp_not_configured'],
    );
  },
);

test('an operator who takes the lead over meanwhile keeps it: the retried job sends nothing', async () => {
  const ws = await h.app.createWorkspace('whatsapp', { agent: SOLAR_AGENT });
  const raw = uniquePhone();
  const phone = `+${raw.replace(/\D/g, '')}`;
  const { leadId } = await h.submit(ws.apiKey, { phone: raw });
  const line = await eventually(
    'the warn line',
    async () =>
      h.app.logs
        .map((l) => JSON.parse(l))
        .find((l) => l.level === 40 && l.leadId === leadId && /jobs retry/.test(l.msg)),
    30_000,
  );
  // An operator's take-over is the lead's latest transition now.
  await h.app.db.pool.query(
    `INSERT INTO lead_events (lead_id, type, data) VALUES ($1, 'lead.taken_over',
      '{"from":"needs_human","to":"needs_human","actor":"operator"}')`,
    [leadId],
  );
  await h.app.workspaces.update(ws.slug, {
    whatsapp: {
      provider: 'twilio',
      accountSid: h.twilio.accountSid,
      authToken: h.twilio.authToken,
      from: h.twilio.sender,
      templateContentSid: h.twilio.templateSid,
    },
  });
  await eventually(
    'the dead letter',
    async () => ((await retryDeadTurns(h.app.boss, [line.jobId])) === 1 ? true : undefined),
    30_000,
  );
  await eventually(
    'the retried job to finish',
    async () => {
      const { rows } = await h.app.db.pool.query(
        `SELECT state FROM pgboss.job WHERE name = 'agent-turn' AND data->>'leadId' = $1 AND state = 'completed'`,
        [leadId],
      );
      return rows.length > 0 ? true : undefined;
    },
    30_000,
  );
  assert.equal(h.twilio.messages.filter((m) => m.to === phone).length, 0);
  assert.equal((await getLead(h.app.http, ws.apiKey, leadId)).body.lead.status, 'needs_human');
});
