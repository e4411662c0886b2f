import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ADDRESS_HOURLY_LIMIT } from '../../src/forms/form-abuse.ts';
import { ensureDemoWorkspaces } from '../../src/sandbox/demo-workspaces.ts';
import { sandboxPhone } from '../../src/sandbox/sandbox-outcomes.ts';
import { uniquePhone } from '../helpers/http.ts';
import { hostedFormSetup, validFields } from '../helpers/hosted-form-setup.ts';

// The hosted form's defences (honeypot, minimum fill time, hourly limits, Turnstile) and the demo
// workspaces' forms in sandbox mode.

const s = hostedFormSetup();
const leadsOf = async (workspaceId: string) =>
  (await s.app.db.pool.query('SELECT livemode FROM leads WHERE workspace_id = $1', [workspaceId])).rows;

describe('bots', () => {
  test('a filled honeypot is thanked and nothing is stored', async () => {
    const { slug, workspaceId } = await s.formWorkspace();
    const res = await s.submit(slug, validFields(uniquePhone(), { website: 'http://spam.example' }));
    assert.equal(res.status, 200);
    assert.match(res.html, /Thank you!/);
    assert.equal((await leadsOf(workspaceId)).length, 0);
  });

  test('sent sooner than the minimum fill time: the form again, nothing stored; later it passes', async () => {
    const { slug, workspaceId } = await s.formWorkspace();
    const res = await s.submit(slug, validFields(uniquePhone()), { wait: 1_000 });
    assert.equal(res.status, 422);
    assert.match(res.html, /That was very quick/);
    assert.equal((await leadsOf(workspaceId)).length, 0);
    // The page sent back carries a new token: sent again after a while, it is taken.
    s.clock.advance(5_000);
    assert.equal((await s.post(slug, { ...res.hidden, ...validFields(uniquePhone()) })).status, 200);
    assert.equal((await leadsOf(workspaceId)).length, 1);
  });

  test('a forged or missing fill token is refused', async () => {
    const { slug, workspaceId } = await s.formWorkspace();
    const page = await s.get(slug);
    s.clock.advance(5_000);
    const [ms] = page.hidden._t!.split('.');
    const forged = `${Number(ms) - 60_000}.${'A'.repeat(43)}`;
    assert.equal((await s.post(slug, { ...page.hidden, _t: forged, ...validFields(uniquePhone()) })).status, 422);
    const { _t, ...noToken } = page.hidden;
    assert.equal((await s.post(slug, { ...noToken, ...validFields(uniquePhone()) })).status, 422);
    assert.equal((await leadsOf(workspaceId)).length, 0);
  });
});

describe('hourly limits', () => {
  test(
    `per address: a POST over ${ADDRESS_HOURLY_LIMIT} in an hour is a friendly 429 page; ` +
      'the hash, not the address, is stored',
    async () => {
      const { slug } = await s.formWorkspace();
      const ip = '198.51.100.23';
      for (let i = 0; i < ADDRESS_HOURLY_LIMIT; i++)
        assert.notEqual((await s.post(slug, { name: 'x' }, { ip })).status, 429, `POST ${i + 1}`);
      const refused = await s.post(slug, validFields(uniquePhone()), { ip });
      assert.equal(refused.status, 429);
      assert.match(String(refused.headers['content-type']), /^text\/html/);
      assert.match(refused.html, /Please try again later/);
      assert.ok(Number(refused.headers['retry-after']) > 0);
      // Another address is not affected.
      assert.equal((await s.submit(slug, validFields(uniquePhone()), { ip: '198.51.100.24' })).status, 200);
      const scopes = (await s.app.db.pool.query('SELECT scope FROM intake_rate_counters')).rows.map(
        (r) => r.scope as string,
      );
      assert.ok(scopes.some((x) => x.startsWith('form:addr:')));
      assert.ok(!scopes.some((x) => x.includes('198.51.100')));
      // The next hour starts afresh.
      s.clock.advance(3_600_000);
      assert.equal((await s.submit(slug, validFields(uniquePhone()), { ip })).status, 200);
    },
  );

  test("per workspace: over the form's hourly limit, whatever the address", async () => {
    const { slug, workspaceId } = await s.formWorkspace();
    await s.forms.save(await s.workspace(slug), { hourlyLimit: 2 });
    assert.equal((await s.submit(slug, validFields(uniquePhone()), { ip: '192.0.2.1' })).status, 200);
    assert.equal((await s.submit(slug, validFields(uniquePhone()), { ip: '192.0.2.2' })).status, 200);
    const third = await s.submit(slug, validFields(uniquePhone()), { ip: '192.0.2.3' });
    assert.equal(third.status, 429);
    assert.equal((await leadsOf(workspaceId)).length, 2);
  });

  test("an address over its own limit does not spend the workspace's: another visitor still gets through", async () => {
    const { slug, workspaceId } = await s.formWorkspace();
    const hourlyLimit = ADDRESS_HOURLY_LIMIT + 5;
    await s.forms.save(await s.workspace(slug), { hourlyLimit });
    for (let i = 0; i < hourlyLimit + 10; i++) await s.post(slug, { name: 'x' }, { ip: '198.51.100.60' });
    const res = await s.submit(slug, validFields(uniquePhone()), { ip: '198.51.100.61' });
    assert.equal(res.status, 200, res.html);
    assert.equal((await leadsOf(workspaceId)).length, 1);
  });
});

describe('Turnstile', () => {
  test('with a site key: the widget is on the page, a token the simulator issued passes, a bad one fails', async () => {
    const { slug, workspaceId } = await s.formWorkspace();
    const saved = await s.forms.save(await s.workspace(slug), {
      turnstile: { siteKey: '0x4AAAAsite', secret: 'ts-secret' },
    });
    assert.deepEqual(saved.turnstile, { siteKey: '0x4AAAAsite', secretSet: true });
    const stored = (await s.app.db.pool.query('SELECT form_settings FROM workspaces WHERE id = $1', [workspaceId]))
      .rows[0];
    assert.doesNotMatch(JSON.stringify(stored), /ts-secret/);
    const page = await s.get(slug);
    assert.match(page.html, /class="cf-turnstile" data-sitekey="0x4AAAAsite"/);
    assert.match(
      String(page.headers['content-security-policy']),
      /script-src 'self' https:\/\/challenges\.cloudflare\.com/,
    );

    const failed = await s.submit(slug, validFields(uniquePhone(), { 'cf-turnstile-response': 'made-up' }));
    assert.equal(failed.status, 422);
    assert.match(failed.html, /not a robot/);
    const missing = await s.submit(slug, validFields(uniquePhone()));
    assert.equal(missing.status, 422);
    assert.equal((await leadsOf(workspaceId)).length, 0);

    const token = s.turnstile.issueToken('ts-secret');
    const passed = await s.submit(slug, validFields(uniquePhone(), { 'cf-turnstile-response': token }), {
      ip: '192.0.2.77',
    });
    assert.equal(passed.status, 200, passed.html);
    assert.equal((await leadsOf(workspaceId)).length, 1);
    const check = s.turnstile.checks.at(-1)!;
    assert.deepEqual(check, { secret: 'ts-secret', response: token, remoteip: '192.0.2.77' });
    // A token is good once.
    const reused = await s.submit(slug, validFields(uniquePhone(), { 'cf-turnstile-response': token }));
    assert.equal(reused.status, 422);
  });

  test('saving the site key again without the secret keeps the sealed secret', async () => {
    const { slug } = await s.formWorkspace();
    await s.forms.save(await s.workspace(slug), { turnstile: { siteKey: 'k1', secret: 'first' } });
    const again = await s.forms.save(await s.workspace(slug), { turnstile: { siteKey: 'k2' } });
    assert.deepEqual(again.turnstile, { siteKey: 'k2', secretSet: true });
    const settings = await s.forms.settings((await s.workspace(slug)).id);
    assert.equal(s.forms.turnstileSecret((await s.workspace(slug)).id, settings), 'first');
  });
});

describe('the demo workspaces', () => {
  test('/forms/demo-voice and /forms/demo-whatsapp take sandbox leads', async () => {
    await ensureDemoWorkspaces(s.app.workspaces, s.app.db.pool);
    const voicePage = await s.get('demo-voice');
    assert.equal(voicePage.status, 200);
    assert.match(voicePage.html, /Test mode: nobody will really call or message you\./);
    const voice = await s.submit('demo-voice', validFields(sandboxPhone('0001')));
    assert.equal(voice.status, 200, voice.html);
    assert.match(voice.html, /We&#39;re calling you now\./);
    const whatsapp = await s.submit('demo-whatsapp', validFields(sandboxPhone('0002')));
    assert.equal(whatsapp.status, 200, whatsapp.html);
    for (const slug of ['demo-voice', 'demo-whatsapp']) {
      const rows = await leadsOf((await s.workspace(slug)).id);
      assert.deepEqual(rows, [{ livemode: false }], slug);
    }
    // An operator's choice of mode is kept by a later demo run.
    await s.forms.save(await s.workspace('demo-voice'), { mode: 'live' });
    await ensureDemoWorkspaces(s.app.workspaces, s.app.db.pool);
    assert.equal((await s.forms.settings((await s.workspace('demo-voice')).id)).mode, 'live');
  });
});
