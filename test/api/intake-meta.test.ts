// Meta Lead Ads through the real route, the real Graph client and the Meta Lead Ads simulator:
// the subscription handshake, the signature (a refusal on the Logs page and the source's status,
// as a malformed change is), a `leadgen` webhook read from Graph, mapped and
// stored as a lead of source `meta`, idempotency, test leads to the sandbox, a Graph failure on
// the source and in the integration log, and the backfill (all forms, or only after `--since`).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sourceCommand } from '../../src/cli/source-commands.ts';
import type { LeadSourceRow } from '../../src/intake/lead-source-queries.ts';
import { LeadSourceService } from '../../src/intake/lead-source-service.ts';
import {
  META_LEADS_SIM,
  startMetaLeadsSimulator,
  type MetaLeadsSimulator,
  leadgenWebhook,
  type SimLead,
} from '../../src/simulators/meta-leads/meta-leads-simulator.ts';
import { META_SIGNATURE_HEADER, signMetaBody } from '../../src/whatsapp/meta/meta-signature.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

let sim: MetaLeadsSimulator;
let app: TestApp;
let base: string;
let workspaceId: string;
let source: LeadSourceRow;
let hookUrl: string;

const secret = {
  pageAccessToken: META_LEADS_SIM.pageAccessToken,
  appSecret: META_LEADS_SIM.appSecret,
  verifyToken: META_LEADS_SIM.verifyToken,
};

const answers = (phone: string, extra: Array<{ name: string; values: string[] }> = []) => [
  { name: 'full_name', values: ['Ada Lovelace'] },
  { name: 'phone_number', values: [phone] },
  { name: 'email', values: ['ada@example.com'] },
  ...extra,
];

async function leadsOf(sourceId: string) {
  const { rows } = await app.db.pool.query(
    `SELECT id, name, phone, email, livemode, source, source_lead_id, source_detail, form_responses, metadata
       FROM leads WHERE source_id = $1 ORDER BY created_at, id`,
    [sourceId],
  );
  return rows;
}

async function sourceRow(id: string) {
  const { rows } = await app.db.pool.query('SELECT last_error, last_lead_at FROM lead_sources WHERE id = $1', [id]);
  return rows[0];
}

/** The refusals recorded for a source (IntakeService.rejected), oldest first. */
async function rejectedOf(sourceId: string) {
  const { rows } = await app.db.pool.query(
    `SELECT provider, kind, http_status, outcome, error, payload FROM integration_events
      WHERE payload->>'sourceId' = $1 AND outcome = 'rejected' ORDER BY id`,
    [sourceId],
  );
  return rows;
}

/** The source's status as the Form page and the admin API show it. */
async function statusOf(sourceId: string) {
  const sources = new LeadSourceService({
    pool: app.db.pool,
    secrets: app.secrets,
    publicBaseUrl: app.config.PUBLIC_BASE_URL,
  });
  return (await sources.get(workspaceId, sourceId))?.status;
}

/** POSTs `body` to the source's webhook, signed with the app secret unless `signature` is given. */
async function postSigned(body: string, signature?: string | null) {
  const sig = signature === undefined ? signMetaBody(secret.appSecret, body) : signature;
  const res = await fetch(hookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(sig === null ? {} : { [META_SIGNATURE_HEADER]: sig }) },
    body,
  });
  return { status: res.status, text: await res.text() };
}

const noSecretIn = (value: unknown) => {
  const text = JSON.stringify(value);
  for (const s of Object.values(secret)) assert.equal(text.includes(s), false, 'no secret or token is stored');
};

before(async () => {
  sim = await startMetaLeadsSimulator();
  ({ app, base } = await startListeningApp({ env: { WHATSAPP_GRAPH_BASE_URL: sim.graphBaseUrl } }));
  ({ workspaceId } = await app.createWorkspace('whatsapp'));
  source = await app.metaIntake.sources.connect(workspaceId, {
    name: 'Our Page',
    secret,
    config: {
      pageId: META_LEADS_SIM.pageId,
      formIds: [META_LEADS_SIM.formId],
      fieldMapping: { 'what_are_you_looking_for?': 'goal', budget: 'question:budget' },
    },
  });
  hookUrl = `${base}/api/intake/meta/${source.token}`;
});
after(async () => {
  await app?.close();
  await sim?.close();
});

describe('the subscription handshake', () => {
  const verify = (token: string, verifyToken: string) =>
    app.http.inject({
      method: 'GET',
      url: `/api/intake/meta/${token}?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=1158201444`,
    });

  test('the right verify token gets the challenge back', async () => {
    const res = await verify(source.token, META_LEADS_SIM.verifyToken);
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '1158201444');
  });

  test('a wrong verify token, or an unknown source, is refused', async () => {
    assert.equal((await verify(source.token, 'guess')).statusCode, 403);
    assert.equal((await verify('x'.repeat(32), META_LEADS_SIM.verifyToken)).statusCode, 403);
  });
});

describe('leadgen webhooks', () => {
  test('a wrong signature is refused with 401 and nothing is read or stored', async () => {
    const lead = sim.addLead({ fieldData: answers('+4915111110001') });
    const reads = sim.requests.length;
    const res = await sim.sendLeadgen(hookUrl, lead, { appSecret: 'not-the-app-secret' });
    assert.equal(res.status, 401);
    assert.equal(sim.requests.length, reads);
    assert.equal((await leadsOf(source.id)).length, 0);
    // The operator sees it: on the Logs page and as the source's status (a wrong app secret).
    const log = await rejectedOf(source.id);
    assert.deepEqual(
      log.map((e) => [e.provider, e.kind, e.outcome, e.http_status]),
      [['meta-leads', 'meta lead', 'rejected', 401]],
    );
    assert.match(log[0].error, /X-Hub-Signature-256 does not match/);
    assert.deepEqual(Object.keys(log[0].payload.request), ['bytes'], 'only the size of an unauthenticated body');
    noSecretIn(log);
    assert.equal(await statusOf(source.id), 'failing');
    assert.match((await sourceRow(source.id)).last_error, /X-Hub-Signature-256/);

    // Without the header at all: the same.
    const unsigned = await postSigned(JSON.stringify(leadgenWebhook(lead)), null);
    assert.equal(unsigned.status, 401);
    const again = await rejectedOf(source.id);
    assert.equal(again.length, 2);
    assert.deepEqual([again[1].http_status, again[1].error], [401, 'X-Hub-Signature-256 is missing.']);
    assert.equal((await leadsOf(source.id)).length, 0);
  });

  let first: SimLead;
  test('a lead is read from Graph, mapped, and stored with source meta and its ad and form ids', async () => {
    first = sim.addLead({
      fieldData: answers('+4915111110002', [
        { name: 'what_are_you_looking_for?', values: ['A kitchen'] },
        { name: 'budget', values: ['10k'] },
        { name: 'city', values: ['Berlin'] },
      ]),
    });
    const res = await sim.sendLeadgen(hookUrl, first);
    assert.equal(res.status, 200);
    const read = sim.requests.at(-1)!;
    assert.equal(read.path, `/${META_LEADS_SIM.version}/${first.id}`);
    assert.equal(read.authorized, true, 'the Page token goes in the Authorization header');
    assert.equal(read.query.access_token, undefined, 'never in the URL');
    const [lead] = await leadsOf(source.id);
    assert.equal(lead.name, 'Ada Lovelace');
    assert.equal(lead.phone, '+4915111110002');
    assert.equal(lead.email, 'ada@example.com');
    assert.equal(lead.livemode, true);
    assert.equal(lead.source, 'meta');
    assert.equal(lead.source_lead_id, first.id);
    assert.deepEqual(lead.form_responses, { budget: '10k' });
    assert.equal(lead.metadata.city, 'Berlin');
    assert.equal(lead.source_detail.adId, first.adId);
    assert.equal(lead.source_detail.formId, META_LEADS_SIM.formId);
    assert.equal(lead.source_detail.campaignId, first.campaignId);
    assert.ok((await sourceRow(source.id)).last_lead_at);
  });

  test('the same webhook twice makes one lead', async () => {
    const res = await sim.sendLeadgen(hookUrl, first);
    assert.equal(res.status, 200);
    assert.equal((await leadsOf(source.id)).filter((l) => l.source_lead_id === first.id).length, 1);
  });

  test("a Testing Tool lead with Meta's dummy answers goes to the sandbox", async () => {
    const dummy = sim.addLead({
      isOrganic: true,
      fieldData: ['full_name', 'phone_number', 'email'].map((f) => ({
        name: f,
        values: [`<test lead: dummy data for ${f}>`],
      })),
    });
    assert.equal((await sim.sendLeadgen(hookUrl, dummy)).status, 200);
    const lead = (await leadsOf(source.id)).find((l) => l.source_lead_id === dummy.id);
    assert.ok(lead, 'stored');
    assert.equal(lead.livemode, false);
    assert.equal(lead.source_detail.organic, true);
  });

  test("a lead of another Page than the source's is not read", async () => {
    const lead = sim.addLead({ fieldData: answers('+4915111110004') });
    const reads = sim.requests.length;
    assert.equal((await sim.sendLeadgen(hookUrl, lead, { pageId: '104857600000999' })).status, 200);
    assert.equal(sim.requests.length, reads);
    assert.equal(
      (await leadsOf(source.id)).some((l) => l.source_lead_id === lead.id),
      false,
    );
  });

  test('a Graph failure is on the source and in the integration log, and Meta still gets 200', async () => {
    const lead = sim.addLead({ fieldData: answers('+4915111110003') });
    sim.failNext(1, { status: 400, code: 190, message: `Error validating access token ${secret.pageAccessToken}` });
    const res = await sim.sendLeadgen(hookUrl, lead);
    assert.equal(res.status, 200);
    assert.equal(
      (await leadsOf(source.id)).some((l) => l.source_lead_id === lead.id),
      false,
    );
    const row = await sourceRow(source.id);
    assert.match(row.last_error, new RegExp(`Reading lead ${lead.id} from the Graph API failed`));
    assert.equal(row.last_error.includes(secret.pageAccessToken), false, 'the token is masked');
    const { rows } = await app.db.pool.query(
      `SELECT kind, http_status, outcome, error, payload::text AS payload FROM integration_events
        WHERE workspace_id = $1 AND outcome = 'error' AND kind = 'GET /{leadgen-id}'`,
      [workspaceId],
    );
    assert.equal(rows.length, 1);
    assert.equal(rows[0].http_status, 400);
    assert.equal(`${rows[0].error}${rows[0].payload}`.includes(secret.pageAccessToken), false);
    assert.equal(
      app.logs.some((line) => line.includes(secret.pageAccessToken)),
      false,
    );
  });

  /** A signed `leadgen` body whose changes announce these leadgen ids. */
  const batch = (...ids: unknown[]) =>
    JSON.stringify({
      object: 'page',
      entry: [
        {
          id: META_LEADS_SIM.pageId,
          time: 1,
          changes: ids.map((id) => ({
            field: 'leadgen',
            value: { leadgen_id: id, page_id: META_LEADS_SIM.pageId, form_id: META_LEADS_SIM.formId },
          })),
        },
      ],
    });

  test('a signed change with a malformed leadgen id is on the Logs page and the source status', async () => {
    const before = (await rejectedOf(source.id)).length;
    const reads = sim.requests.length;
    const res = await postSigned(batch('abc'));
    // Answered 200 like a lead the service refuses: Meta's retries would carry the same change.
    assert.equal(res.status, 200, res.text);
    assert.equal(sim.requests.length, reads, 'nothing to read');
    const log = (await rejectedOf(source.id)).slice(before);
    assert.deepEqual(
      log.map((e) => [e.provider, e.outcome]),
      [['meta-leads', 'rejected']],
    );
    assert.match(log[0].error, /entry\.0\.changes\.0\.value\.leadgen_id/);
    assert.deepEqual(log[0].payload.request.issues[0].path, ['entry', '0', 'changes', '0', 'value', 'leadgen_id']);
    noSecretIn(log);
    assert.equal(await statusOf(source.id), 'failing');
    assert.match((await sourceRow(source.id)).last_error, /leadgen_id/);
  });

  test("a malformed change does not refuse the batch's valid ones", async () => {
    const lead = sim.addLead({ fieldData: answers('+4915111110005') });
    const before = (await rejectedOf(source.id)).length;
    const res = await postSigned(batch(lead.id, 'abc'));
    assert.equal(res.status, 200, res.text);
    assert.equal((await leadsOf(source.id)).filter((l) => l.source_lead_id === lead.id).length, 1, 'the valid one');
    const log = (await rejectedOf(source.id)).slice(before);
    assert.equal(log.length, 1);
    assert.deepEqual(log[0].payload.request.issues[0].path, ['entry', '0', 'changes', '1', 'value', 'leadgen_id']);
    // Recorded after the batch's lead: the source shows the failure, not only the lead.
    assert.equal(await statusOf(source.id), 'failing');
  });

  test('a signed body that is not a leadgen webhook is a 400, recorded without its text', async () => {
    const before = (await rejectedOf(source.id)).length;
    const res = await postSigned('{"object":"page","entry":');
    assert.equal(res.status, 400);
    const log = (await rejectedOf(source.id)).slice(before);
    assert.deepEqual(
      log.map((e) => [e.provider, e.outcome, e.http_status]),
      [['meta-leads', 'rejected', 400]],
    );
    assert.deepEqual(Object.keys(log[0].payload.request).sort(), ['bytes', 'issues'], 'the body is not stored');
    assert.equal(await statusOf(source.id), 'failing');
  });
});

describe('backfill', () => {
  test('reads the forms page by page and creates only the leads that are missing, once', async () => {
    const known = (await leadsOf(source.id)).length;
    const missed = [0, 1, 2].map((i) => sim.addLead({ fieldData: answers(`+491511111002${i}`) }));
    // One of them did arrive by webhook.
    assert.equal((await sim.sendLeadgen(hookUrl, missed[0]!)).status, 200);
    const pagesBefore = sim.requests.filter((r) => r.path.endsWith('/leads')).length;
    const report = await app.metaIntake.backfill(source.id, { pageSize: 2 });
    assert.ok(report);
    assert.equal(report.error, undefined);
    // The two missed ones, the one whose Graph read failed, the one whose signature was wrong, the
    // one announced for another Page (the simulator keeps every lead in the one form).
    assert.equal(report.created, 5);
    assert.equal(report.known, known + 1);
    // 9 leads (the 6 above, and the 3 the webhook made: the first, the dummy one, the malformed batch's valid one).
    assert.equal(sim.requests.filter((r) => r.path.endsWith('/leads')).length - pagesBefore, 5, '9 leads, 2 a page');
    const ids = (await leadsOf(source.id)).map((l) => l.source_lead_id);
    assert.equal(ids.length, known + 6);
    for (const l of missed) assert.equal(ids.filter((id) => id === l.id).length, 1);
    const again = await app.metaIntake.backfill(source.id);
    assert.equal(again?.created, 0);
    assert.equal((await leadsOf(source.id)).length, known + 6);
  });

  test('`source backfill --since` reads and submits only the leads created after it', async () => {
    // Dated far from the other tests' leads (created now): only the one after --since is read.
    const before2020 = sim.addLead({
      createdTime: new Date('2020-01-01T08:00:00Z'),
      fieldData: answers('+4915111110031'),
    });
    const justBefore = sim.addLead({
      createdTime: new Date('2039-12-31T23:59:59Z'),
      fieldData: answers('+4915111110032'),
    });
    const after2040 = sim.addLead({
      createdTime: new Date('2040-01-01T00:00:01Z'),
      fieldData: answers('+4915111110033'),
    });
    const pagesBefore = sim.requests.filter((r) => r.path.endsWith('/leads')).length;
    const out: string[] = [];
    const print = console.log;
    console.log = (line: unknown) => void out.push(String(line));
    try {
      const db = { url: app.db.url, pool: app.db.pool, close: async () => {} };
      const code = await sourceCommand(
        ['backfill', source.id, '--since', '2040-01-01T00:00:00Z', '--json'],
        app.config,
        app.log,
        db,
      );
      assert.equal(code, 0);
    } finally {
      console.log = print;
    }
    const report = JSON.parse(out.at(-1)!);
    assert.deepEqual([report.read, report.created, report.known], [1, 1, 0]);
    const page = sim.requests.filter((r) => r.path.endsWith('/leads')).slice(pagesBefore);
    assert.equal(page.length, 1);
    assert.deepEqual(JSON.parse(page[0]!.query.filtering!), [
      { field: 'time_created', operator: 'GREATER_THAN', value: Date.parse('2040-01-01T00:00:00Z') / 1000 },
    ]);
    const ids = new Set((await leadsOf(source.id)).map((l) => l.source_lead_id));
    assert.equal(ids.has(after2040.id), true);
    assert.equal(ids.has(justBefore.id), false);
    assert.equal(ids.has(before2020.id), false);
  });

  test('an unknown source id is null', async () => {
    assert.equal(await app.metaIntake.backfill('00000000-0000-4000-8000-000000000000'), null);
  });
});
