import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FormSettingsService } from '../../src/forms/form-settings-service.ts';
import { LeadSourceService } from '../../src/intake/lead-source-service.ts';
import { DEMO_AGENT } from '../../src/sandbox/demo-workspaces.ts';
import { uniquePhone } from '../helpers/http.ts';
import { validFields } from '../helpers/hosted-form-setup.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// The workspace's form key (src/forms/form-key.ts) and the hosted form's `hourlyLimit`
// (docs/INTAKE.md): the form and the embed are limited by the form's own hourly limits only, not
// by the key's DEFAULT_HOURLY_LIMIT; the connected sources, which share the key, stay limited by
// it, and the form's POSTs do not spend it.

let app: TestApp;
const clock = new TestClock();

before(async () => {
  // A key default below the form's setting, so the form's limit is the one that must hold.
  app = await startTestApp({ clock, env: { DEFAULT_HOURLY_LIMIT: '3' } });
});
after(() => app.close());

/** GETs the form, waits past the minimum fill time, POSTs it with a valid lead from `ip`. */
async function submitForm(slug: string, ip: string, query = ''): Promise<number> {
  const page = await app.http.inject({ method: 'GET', url: `/forms/${slug}${query}` });
  assert.equal(page.statusCode, 200);
  const hidden: Record<string, string> = {};
  for (const m of page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) hidden[m[1]!] = m[2]!;
  clock.advance(5_000);
  const res = await app.http.inject({
    method: 'POST',
    url: `/forms/${slug}${query}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ ...hidden, ...validFields(uniquePhone()) }).toString(),
    remoteAddress: ip,
  });
  return res.statusCode;
}

describe("the form key's limit", () => {
  test("the form admits up to its own hourlyLimit above the key default; sources keep the key's", async () => {
    const { slug, workspaceId } = await app.createWorkspace('whatsapp', { agent: DEMO_AGENT });
    const forms = new FormSettingsService(app.db.pool, app.secrets);
    await forms.save((await app.workspaces.findBySlug(slug))!, { hourlyLimit: 6 });
    for (let i = 0; i < 6; i++)
      assert.equal(await submitForm(slug, `192.0.2.${i + 1}`, i % 2 ? '?embed=1' : ''), 200, `POST ${i + 1}`);
    assert.equal(await submitForm(slug, '192.0.2.50'), 429, "over the form's hourlyLimit");

    // A generic webhook submits with the same key: its 3 an hour are whole, and hold.
    const sources = new LeadSourceService({
      pool: app.pool,
      secrets: app.secrets,
      publicBaseUrl: app.config.PUBLIC_BASE_URL,
    });
    const { source, secret } = await sources.create(workspaceId, { kind: 'webhook', name: 'Tally' });
    const deliver = async () =>
      (
        await app.http.inject({
          method: 'POST',
          url: new URL(source.url).pathname,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
          payload: JSON.stringify({ name: 'Ada', phone: uniquePhone() }),
        })
      ).statusCode;
    for (let i = 0; i < 3; i++) assert.equal(await deliver(), 200, `delivery ${i + 1}`);
    assert.equal(await deliver(), 429);
  });
});
