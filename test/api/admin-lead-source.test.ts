import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { admin } from '../helpers/admin.ts';
import { setUpAdminApi } from '../helpers/admin-api-setup.ts';
import { postLead, uniquePhone, validLead } from '../helpers/http.ts';

// Where a lead came from on the lead page, with its consent text, and the inbox's `source` filter
// (docs/DASHBOARD.md, "Lead page" and "Inbox"; docs/INTAKE.md). The leads are made through the
// public API and then given the source columns the intake paths write (their own tests:
// intake-*.test.ts, hosted-form tests), so each kind's words are checked here exactly.

const { setup: env, sessions, leadsUrl, newLead, signInEveryRole } = setUpAdminApi();

const ids = {} as Record<'api' | 'form' | 'embed' | 'meta' | 'google' | 'webhook' | 'stray', string>;
let otherMetaLead: string;
let keyName: string;

async function setSource(
  leadId: string,
  source: string,
  over: { sourceId?: string; sourceLeadId?: string; detail?: object; consentTextId?: number } = {},
) {
  await env.app.db.pool.query(
    `UPDATE leads SET source = $2, source_id = $3, source_lead_id = $4, source_detail = $5, consent_text_id = $6
      WHERE id = $1`,
    [
      leadId,
      source,
      over.sourceId ?? null,
      over.sourceLeadId ?? null,
      over.detail ? JSON.stringify(over.detail) : null,
      over.consentTextId ?? null,
    ],
  );
}

async function leadSource(workspaceId: string, kind: string, name: string): Promise<string> {
  const { rows } = await env.app.db.pool.query(
    `INSERT INTO lead_sources (workspace_id, kind, name, token) VALUES ($1, $2, $3, gen_random_uuid()::text)
     RETURNING id`,
    [workspaceId, kind, name],
  );
  return rows[0].id;
}

async function consentText(workspaceId: string, version: number, text: string): Promise<number> {
  const { rows } = await env.app.db.pool.query(
    `INSERT INTO consent_texts (workspace_id, version, text) VALUES ($1, $2, $3) RETURNING id`,
    [workspaceId, version, text],
  );
  return Number(rows[0].id);
}

const page = async (id: string) => {
  const r = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}/${id}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.lead;
};

describe('a lead’s source', () => {
  before(async () => {
    await signInEveryRole();
    const { ws, other } = env;
    keyName = (await env.app.db.pool.query('SELECT name FROM api_keys WHERE id = $1', [ws.apiKeyId])).rows[0].name;
    for (const k of ['api', 'form', 'embed', 'meta', 'google', 'webhook', 'stray'] as const)
      ids[k] = await newLead({ name: `Source ${k}` });
    const v2 = await consentText(ws.workspaceId, 2, 'I agree that Acme may call me.\nLine two <b>not markup</b>.');
    await setSource(ids.form, 'form', { consentTextId: v2 });
    await setSource(ids.embed, 'embed', { detail: { page: 'https://example.com/contact' }, consentTextId: v2 });
    const meta = await leadSource(ws.workspaceId, 'meta', 'Spring campaign');
    await setSource(ids.meta, 'meta', {
      sourceId: meta,
      sourceLeadId: 'lg-777',
      detail: { leadgenId: 'lg-777', adId: '123', formId: '456', pageId: '9', organic: false },
    });
    const google = await leadSource(ws.workspaceId, 'google', 'Search ads');
    await setSource(ids.google, 'google', {
      sourceId: google,
      sourceLeadId: 'g-1',
      detail: { campaignId: 11, creativeId: '22', formId: '33', gclId: 'x' },
    });
    await setSource(ids.webhook, 'webhook', { sourceId: await leadSource(ws.workspaceId, 'webhook', 'Typeform') });
    // Ids of another workspace's rows (never written by the service): the page shows neither.
    const foreignText = await consentText(other.workspaceId, 1, 'Another workspace’s text');
    const foreignSource = await leadSource(other.workspaceId, 'webhook', 'Their webhook');
    await setSource(ids.stray, 'webhook', { sourceId: foreignSource, consentTextId: foreignText });
    // A meta lead of the other workspace: never in this workspace's filtered inbox.
    const r = await postLead(env.app.http, other.apiKey, validLead({ phone: uniquePhone() }));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    otherMetaLead = r.body.leadId;
    await setSource(otherMetaLead, 'meta', { detail: { adId: '123' } });
  });

  describe('the lead page: source and consent text', () => {
    it('a form lead: "Hosted form", with the consent record and its exact text and version', async () => {
      const l = await page(ids.form);
      assert.deepEqual(l.source, { kind: 'form', words: 'Hosted form', name: null, sourceLeadId: null, detail: null });
      assert.equal(l.consent.ip, '127.0.0.1');
      assert.ok(l.consent.at);
      assert.deepEqual(l.consent.text, {
        version: 2,
        text: 'I agree that Acme may call me.\nLine two <b>not markup</b>.',
      });
    });

    it('each kind in words: embed with its page, Meta and Google with name and ids, webhook, API key', async () => {
      assert.equal((await page(ids.embed)).source.words, 'Embedded form on https://example.com/contact');
      const meta = await page(ids.meta);
      assert.equal(meta.source.words, 'Meta Lead Ads — Spring campaign (ad 123, form 456)');
      assert.equal(meta.source.name, 'Spring campaign');
      assert.equal(meta.source.sourceLeadId, 'lg-777');
      assert.equal(meta.source.detail.leadgenId, 'lg-777');
      assert.equal(meta.consent.text, null);
      assert.equal(
        (await page(ids.google)).source.words,
        'Google lead form — Search ads (campaign 11, ad 22, form 33)',
      );
      assert.equal((await page(ids.webhook)).source.words, 'Webhook — Typeform');
      const api = await page(ids.api);
      assert.deepEqual(api.source, {
        kind: 'api',
        words: `API key ${keyName}`,
        name: null,
        sourceLeadId: null,
        detail: null,
      });
      assert.equal(api.consent.text, null);
    });

    it("another workspace's consent text or source is never shown, even if a lead pointed at it", async () => {
      const l = await page(ids.stray);
      assert.equal(l.consent.text, null);
      assert.equal(l.source.name, null);
      assert.equal(l.source.words, 'Webhook');
      assert.ok(!JSON.stringify(l).includes('Another workspace'));
    });

    it("another workspace's lead page is a 404 for this workspace's operator", async () => {
      const r = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}/${otherMetaLead}`);
      assert.equal(r.status, 404);
    });
  });

  describe('the inbox filters by source', () => {
    const inbox = async (query: string) => {
      const r = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}?${query}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.leads.map((l: { id: string }) => l.id).sort();
    };

    it("returns only that source's leads of the workspace", async () => {
      assert.deepEqual(await inbox('source=meta'), [ids.meta]);
      assert.deepEqual(await inbox('source=webhook'), [ids.webhook, ids.stray].sort());
      assert.deepEqual(await inbox('source=form&status=new'), [ids.form]);
      assert.deepEqual(await inbox('source=publishable'), []);
      const all = await inbox('limit=100');
      assert.ok(all.includes(ids.meta) && all.includes(ids.form) && all.length > 2);
      assert.ok(!all.includes(otherMetaLead));
    });

    it('an unknown source is a 400 naming the parameter', async () => {
      const r = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}?source=fax`);
      assert.equal(r.status, 400);
      assert.match(JSON.stringify(r.body), /source/);
    });

    it('the CSV export takes the same filter', async () => {
      const r = await admin(
        env.app.http,
        sessions.viewer,
        'GET',
        `/api/admin/workspaces/${env.ws.slug}/leads.csv?source=meta`,
      );
      assert.equal(r.status, 200);
      const lines = String(r.body).trim().split('\n');
      assert.equal(lines.length, 2, String(r.body));
      assert.ok(lines[1]!.includes('Source meta'));
    });

    it('the OpenAPI document lists the filter and the lead page’s source', async () => {
      const r = await env.app.http.inject({ method: 'GET', url: '/openapi.json' });
      const doc = JSON.parse(r.body);
      const params = doc.paths['/api/admin/workspaces/{slug}/leads'].get.parameters;
      const source = params.find((p: { name: string }) => p.name === 'source');
      assert.deepEqual(source.schema.enum, ['api', 'form', 'embed', 'publishable', 'meta', 'google', 'webhook']);
    });
  });
});
