import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listDeadTurns } from '../../src/jobs/dead-letters.ts';
import { AGENT_TURN_DEAD_LETTER } from '../../src/jobs/queues.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';
import { runCli } from '../helpers/worker-process.ts';

// One id names an agent turn throughout: the id its outbox row gave the job. The
// `agent turn` log lines, `jobs dead` and `jobs retry` use it, before and after the turn went
// through the dead-letter queue, although pg-boss gives each copy of the job an id of its own.

let h: WhatsappHarness;
let ws: { slug: string; apiKey: string; workspaceId: string };

before(async () => {
  h = await startWhatsappHarness();
  ws = await h.workspace('twilio');
});
after(async () => {
  await h?.close();
});

/** The `agent turn` log lines of a lead, parsed. */
function turnLines(leadId: string): Array<{ jobId: string; result: string }> {
  return h.app.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'agent turn' && l.leadId === leadId);
}

describe('one job id', () => {
  it('log line, jobs dead and jobs retry agree, also after the retry', async () => {
    const raw = uniquePhone();
    // Twilio refuses the workspace's credentials on every attempt (retry limit 5: six attempts),
    // so the first contact ends in the dead-letter queue.
    h.twilio.failNextSends(6, { status: 401, code: 20003 });
    const { leadId, phone } = await h.submit(ws.apiKey, { phone: raw });
    const [outbox] = (await h.app.db.pool.query(`SELECT job_id FROM outbox WHERE payload->>'leadId' = $1`, [leadId]))
      .rows;
    const turnId: string = outbox.job_id;
    await h.settle({ ignoreBackoff: true });

    const failed = turnLines(leadId);
    assert.equal(failed.length, 6);
    assert.deepEqual(new Set(failed.map((l) => l.jobId)), new Set([turnId]));
    assert.ok(failed.every((l) => l.result === 'dead'));

    const dead = (await listDeadTurns(h.app.boss)).filter((d) => d.leadId === leadId);
    assert.deepEqual(
      dead.map((d) => d.id),
      [turnId],
    );
    const cliDead = JSON.parse((await runCli(['jobs', 'dead', '--json'], h.workerEnv())).stdout) as Array<{
      id: string;
      leadId: string;
    }>;
    assert.deepEqual(
      cliDead.filter((d) => d.leadId === leadId).map((d) => d.id),
      [turnId],
    );
    // pg-boss's own id of the dead-letter copy is another one, and not what jobs retry takes.
    const [copy] = await h.app.boss.findJobs(AGENT_TURN_DEAD_LETTER, { data: { leadId } });
    assert.notEqual(copy!.id, turnId);
    const wrong = await runCli(['jobs', 'retry', copy!.id], h.workerEnv());
    assert.equal(wrong.stderr, 'leadintake: No such dead-lettered job.\n');

    const retried = await runCli(['jobs', 'retry', turnId], h.workerEnv());
    assert.equal(retried.code, 0, retried.stderr);
    assert.equal(retried.stdout, 'Sent 1 agent turn(s) back to the queue.\n');
    await h.settle({ ignoreBackoff: true });
    const after = turnLines(leadId).slice(failed.length);
    assert.deepEqual(
      after.map((l) => [l.jobId, l.result]),
      [[turnId, 'done']],
    );
    assert.equal(h.twilio.messages.filter((m) => m.to === phone).length, 1);
    assert.deepEqual(
      (await listDeadTurns(h.app.boss)).filter((d) => d.leadId === leadId),
      [],
    );
  });
});
