import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { admin, makeOperator, signIn } from '../helpers/admin.ts';
import { getLead, postLead } from '../helpers/http.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// A sandbox lead without an e-mail address once looped: the agent asked for the address, the
// simulated lead answered something else, the agent offered times again, and so on, hundreds of
// messages until an operator took the lead over. Now the simulated lead gives an address when
// asked, and every lead, live or sandbox, has a bound on its agent turns: at the bound it goes to
// a person with the reason on its timeline.

let app: TestApp;
let workspace: { sandboxKey: string; slug: string; workspaceId: string };

before(async () => {
  // Listening: the simulated lead's answers come back to the app's own URL.
  ({ app } = await startListeningApp());
  workspace = await app.createWorkspace('whatsapp', { agent: SOLAR_AGENT });
});

after(async () => {
  await app?.close();
});

/** A worker whose engine has the given per-lead bound of agent turns (the config's by default). */
function workerWith(maxAgentTurns = app.config.MAX_AGENT_TURNS_PER_LEAD): TurnWorker {
  const engine = new TurnEngine({
    integrationLog: app.integrationLog,
    pool: app.db.pool,
    log: app.log,
    clock: () => new Date(),
    workspaces: app.workspaces,
    providers: defaultConversationProviders(app.config, { scheduling: app.scheduling }),
    sandbox: app.sandbox,
    maxAgentTurns,
  });
  return new TurnWorker({ boss: app.boss, engine, log: app.log, concurrency: 2 });
}

/** Relays, runs turn jobs and waits for the simulators until nothing is left, or `rounds` are used up. */
async function settle(worker: TurnWorker, rounds: number): Promise<boolean> {
  for (let round = 0; round < rounds; round++) {
    await app.relay.drain();
    const ran = await worker.drainOnce({ ignoreBackoff: true });
    await app.sandbox.settled();
    const { rows } = await app.db.pool.query('SELECT count(*)::int AS n FROM outbox');
    if (ran === 0 && rows[0].n === 0) return true;
  }
  return false;
}

let n = 0;
const phone = () => `+1 555 ${String(300 + ++n).padStart(3, '0')} 0001`;

/** A sandbox lead without an e-mail address. */
const submit = () => postLead(app.http, workspace.sandboxKey, { name: 'Ada Sandbox', phone: phone(), consent: true });

async function agentTurns(leadId: string): Promise<number> {
  const sql = `SELECT count(*)::int AS n FROM agent_turns WHERE lead_id = $1 AND kind <> 'operator'`;
  return (await app.db.pool.query(sql, [leadId])).rows[0].n;
}

async function messagesOf(leadId: string): Promise<{ direction: string; body: string }[]> {
  const sql = 'SELECT direction, body FROM whatsapp_messages WHERE lead_id = $1 ORDER BY id';
  const { rows } = await app.db.pool.query(sql, [leadId]);
  return rows;
}

describe('a sandbox lead without an e-mail address', () => {
  it('ends: the agent asks for the address, the simulated lead gives one, the consultation is booked', async () => {
    const created = await submit();
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const ended = await settle(workerWith(), 60);
    const messages = await messagesOf(created.body.leadId);
    const last = messages
      .slice(-4)
      .map((m) => m.body)
      .join(' | ');
    assert.equal(ended, true, `still going after ${messages.length} messages, the last: ${last}`);
    const got = await getLead(app.http, workspace.sandboxKey, created.body.leadId);
    assert.equal(got.body.lead.status, 'booked', JSON.stringify(got.body));
    const asked = messages.some((m) => m.direction === 'outbound' && /e-mail address/i.test(m.body));
    assert.ok(asked, 'the agent asked for the address');
    assert.ok(messages.length < 20, `${messages.length} messages`);
  });
});

describe('the bound on agent turns per lead', () => {
  it('hands the lead to a person at the bound, with the reason on its timeline, and sends nothing more', async () => {
    const created = await submit();
    assert.equal(created.status, 201);
    // The whole qualification takes more turns than this.
    assert.equal(await settle(workerWith(3), 60), true);
    const got = await getLead(app.http, workspace.sandboxKey, created.body.leadId);
    assert.equal(got.body.lead.status, 'needs_human', JSON.stringify(got.body));
    assert.equal(await agentTurns(created.body.leadId), 3);
    const { rows: events } = await app.db.pool.query(
      `SELECT data FROM lead_events WHERE lead_id = $1 AND type = 'conversation.escalated' ORDER BY id DESC LIMIT 1`,
      [created.body.leadId],
    );
    assert.equal(events[0]?.data.outcome, 'agent_turn_limit');
    assert.match(events[0]?.data.reason, /3 agent turns/);
    const outbound = (await messagesOf(created.body.leadId)).filter((m) => m.direction === 'outbound');
    assert.equal(outbound.length, 3);
  });

  it('"Resume AI" gives the agent the whole bound again: here enough to finish and book', async () => {
    const created = await submit();
    const worker = workerWith(3);
    await settle(worker, 60);
    const op = await makeOperator(app, [{ workspaceId: workspace.workspaceId, role: 'agent' }]);
    const session = (await signIn(app.http, op.email, op.password)).session!;
    const lead = `/api/admin/workspaces/${workspace.slug}/leads/${created.body.leadId}`;
    const resumed = await admin(app.http, session, 'POST', `${lead}/resume`);
    assert.deepEqual(resumed.body, { ok: true, status: 'in_conversation' });
    assert.equal(await settle(worker, 60), true);
    // The agent went on past its first 3 turns, and this conversation needs few more to finish.
    const turns = await agentTurns(created.body.leadId);
    assert.ok(turns > 3 && turns <= 6, String(turns));
    assert.equal((await getLead(app.http, workspace.sandboxKey, created.body.leadId)).body.lead.status, 'booked');
  });
});
