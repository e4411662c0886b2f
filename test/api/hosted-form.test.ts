import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { uniquePhone } from '../helpers/http.ts';
import { hostedFormSetup, validFields } from '../helpers/hosted-form-setup.ts';

// The hosted form (docs/INTAKE.md, "The hosted form"), as a browser without JavaScript uses it:
// GET renders the workspace's form, a plain POST submits through LeadService.

const s = hostedFormSetup();

describe('GET /forms/<slug>', () => {
  test("renders the workspace's name, fields, questions with their options, and consent text", async () => {
    const { slug } = await s.formWorkspace();
    const page = await s.get(slug);
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.match(page.html, /<html lang="en">/);
    assert.match(page.html, new RegExp(`<h1>Workspace ${slug}</h1>`));
    for (const label of [
      'Your name',
      'Phone number',
      'E-mail',
      'Do you own the property?',
      'Monthly electricity bill (EUR)',
    ])
      assert.ok(page.html.includes(label), label);
    assert.match(
      page.html,
      new RegExp(
        /<select id="f-q_owner" name="q_owner" required[^>]*><option value="">Please choose<\/option>/.source +
          /<option>Yes<\/option><option>No<\/option><\/select>/.source,
      ),
    );
    assert.match(page.html, new RegExp(`I agree that Workspace ${slug} may contact me`));
    assert.match(page.html, /<input type="checkbox" id="f-consent" name="consent" value="yes" required/);
    // The consent text shown is a stored version, and the page says which.
    const consent = await s.app.db.pool.query('SELECT id, text FROM consent_texts WHERE id = $1', [
      Number(page.hidden._c),
    ]);
    assert.match(consent.rows[0].text, /^I agree that/);
    assert.match(page.hidden._t!, /^\d+\.[A-Za-z0-9_-]{43}$/);
  });

  test('the CSP allows our own script file only, no inline script, and the page cannot be framed', async () => {
    const { slug } = await s.formWorkspace();
    const page = await s.get(slug);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.doesNotMatch(page.html, /<script>/);
    assert.match(page.html, /<script src="\/forms\/assets\/form.js" defer><\/script>/);
    const js = await s.app.http.inject({ method: 'GET', url: '/forms/assets/form.js' });
    assert.equal(js.statusCode, 200);
    assert.match(String(js.headers['content-type']), /^text\/javascript/);
    assert.match(js.body, /leadintake:height/);
  });

  test('?embed=1 may be framed, and carries the page it is on to the POST', async () => {
    const { slug } = await s.formWorkspace();
    const page = await s.get(slug, `?embed=1&page=${encodeURIComponent('https://example.com/pricing')}`);
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors \*/);
    assert.equal(page.headers['x-frame-options'], undefined);
    assert.match(page.html, /<html lang="en" data-embed="1">/);
    assert.equal(page.hidden._page, 'https://example.com/pricing');
    assert.match(page.html, new RegExp(`action="/forms/${slug}\\?embed=1"`));
  });

  test('an unknown form is a 404 page', async () => {
    const page = await s.get('no-such-workspace');
    assert.equal(page.status, 404);
    assert.match(page.html, /Form not found/);
  });
});

describe('POST /forms/<slug>', () => {
  test('creates a lead with source form, the consent version shown, address, user agent and page', async () => {
    const { slug, workspaceId } = await s.formWorkspace();
    const phone = uniquePhone();
    const res = await s.submit(slug, validFields(phone), { query: '' });
    assert.equal(res.status, 200, res.html);
    assert.match(res.html, /Thank you!/);
    assert.match(res.html, /We will send you a WhatsApp message in a moment/);
    const { rows } = await s.app.db.pool.query(
      `SELECT l.source, l.consent_text_id, l.consent_ip, l.consent_user_agent, l.form_responses, l.email, l.livemode,
              c.text AS consent_text, k.kind AS key_kind
         FROM leads l JOIN consent_texts c ON c.id = l.consent_text_id JOIN api_keys k ON k.id = l.api_key_id
        WHERE l.workspace_id = $1`,
      [workspaceId],
    );
    assert.equal(rows.length, 1);
    assert.equal(rows[0].source, 'form');
    assert.match(rows[0].consent_text, /^I agree that/);
    assert.equal(rows[0].consent_ip, '203.0.113.7');
    assert.equal(rows[0].consent_user_agent, 'FormTest/1.0');
    assert.deepEqual(rows[0].form_responses, { q_owner: 'Yes', q_bill: '120' });
    assert.equal(rows[0].email, 'ada@example.com');
    assert.equal(rows[0].livemode, true);
    assert.equal(rows[0].key_kind, 'form');
  });

  test('embedded: source embed, and the page it was on in source_detail', async () => {
    const { slug, workspaceId } = await s.formWorkspace();
    const form = await s.get(slug, `?embed=1&page=${encodeURIComponent('https://example.com/pricing')}`);
    s.clock.advance(5_000);
    const res = await s.post(slug, { ...form.hidden, ...validFields(uniquePhone()) }, { query: '?embed=1' });
    assert.equal(res.status, 200, res.html);
    const { rows } = await s.app.db.pool.query('SELECT source, source_detail FROM leads WHERE workspace_id = $1', [
      workspaceId,
    ]);
    assert.equal(rows[0].source, 'embed');
    assert.deepEqual(rows[0].source_detail, { page: 'https://example.com/pricing' });
  });

  test('the same phone again: 409 "we already have your details"', async () => {
    const { slug } = await s.formWorkspace();
    const phone = uniquePhone();
    assert.equal((await s.submit(slug, validFields(phone))).status, 200);
    const again = await s.submit(slug, validFields(phone, { name: 'Ada again' }));
    assert.equal(again.status, 409);
    assert.match(again.html, /We already have your details, we&#39;ll be in touch\./);
  });

  test("validation errors are shown next to their fields with the API's messages, input kept, no lead", async () => {
    const { slug, workspaceId } = await s.formWorkspace();
    const res = await s.submit(slug, {
      name: '',
      phone: '12',
      email: 'not-mail',
      q_owner: 'Maybe',
      q_bill: '-5',
      goal: 'Solar <b>',
    });
    assert.equal(res.status, 422);
    const errorOf = (field: string) =>
      new RegExp(`<p class="error" id="f-${field}-error">([^<]+)</p>`).exec(res.html)?.[1];
    assert.equal(errorOf('name'), 'Name must be 1 to 120 characters.');
    assert.equal(errorOf('phone'), 'Phone must be a valid E.164-style number.');
    assert.equal(errorOf('email'), 'Email must be a valid e-mail address.');
    assert.equal(errorOf('q_owner'), 'Please choose one of the options.');
    assert.equal(errorOf('q_bill'), 'Please enter a number of at least 0.');
    assert.equal(errorOf('consent'), 'Please agree to be contacted, so that we can answer you.');
    // Each error is tied to its field.
    assert.match(
      res.html,
      /id="f-phone" name="phone" required [^>]*aria-describedby="f-phone-hint f-phone-error" aria-invalid="true"/,
    );
    assert.match(res.html, /id="f-consent"[^>]*aria-invalid="true" aria-describedby="f-consent-error"/);
    assert.match(res.html, /role="alert"/);
    // What the lead typed is kept, escaped.
    assert.match(res.html, /value="12"/);
    assert.match(res.html, /Solar &lt;b&gt;<\/textarea>/);
    assert.equal((await s.app.db.pool.query('SELECT 1 FROM leads WHERE workspace_id = $1', [workspaceId])).rowCount, 0);
  });

  test('never accepted without consent, even when everything else is right', async () => {
    const { slug, workspaceId } = await s.formWorkspace();
    const { consent: _c, ...rest } = validFields(uniquePhone());
    const res = await s.submit(slug, rest);
    assert.equal(res.status, 422);
    assert.match(res.html, /id="f-consent-error">Please agree to be contacted/);
    assert.equal((await s.app.db.pool.query('SELECT 1 FROM leads WHERE workspace_id = $1', [workspaceId])).rowCount, 0);
  });

  test('e-mail required by the workspace; hidden e-mail is neither shown nor stored', async () => {
    const { slug, workspaceId } = await s.formWorkspace();
    await s.forms.save(await s.workspace(slug), { email: 'required' });
    const { email: _e, ...noEmail } = validFields(uniquePhone());
    const missing = await s.submit(slug, noEmail);
    assert.equal(missing.status, 422);
    assert.match(missing.html, /id="f-email-error">Please enter your e-mail address\./);
    await s.forms.save(await s.workspace(slug), { email: 'hidden' });
    const page = await s.get(slug);
    assert.doesNotMatch(page.html, /name="email"/);
    assert.equal((await s.submit(slug, validFields(uniquePhone()))).status, 200);
    const { rows } = await s.app.db.pool.query('SELECT email FROM leads WHERE workspace_id = $1', [workspaceId]);
    assert.equal(rows[0].email, null);
  });
});

describe('form settings', () => {
  test('a changed consent text is a new version; a lead keeps the version its page showed', async () => {
    const { slug, workspaceId } = await s.formWorkspace();
    const first = await s.get(slug);
    const saved = await s.forms.save(await s.workspace(slug), { consentText: 'You may call me about solar.' });
    assert.equal(saved.consent.text, 'You may call me about solar.');
    assert.notEqual(saved.consent.id, Number(first.hidden._c));
    const second = await s.get(slug);
    assert.equal(Number(second.hidden._c), saved.consent.id);
    assert.match(second.html, /You may call me about solar\./);
    // Saving the same text again makes no new version.
    assert.equal(
      (await s.forms.save(await s.workspace(slug), { consentText: 'You may call me about solar.' })).consent.id,
      saved.consent.id,
    );
    // The page opened before the change is submitted: its lead agreed to the first text.
    s.clock.advance(5_000);
    assert.equal((await s.post(slug, { ...first.hidden, ...validFields(uniquePhone()) })).status, 200);
    const { rows } = await s.app.db.pool.query('SELECT consent_text_id FROM leads WHERE workspace_id = $1', [
      workspaceId,
    ]);
    assert.equal(Number(rows[0].consent_text_id), Number(first.hidden._c));
  });

  test('German: the page, the default consent and the messages in German', async () => {
    const { slug } = await s.formWorkspace();
    await s.forms.save(await s.workspace(slug), { language: 'de', accentColor: '#FFCC00' });
    const page = await s.get(slug);
    assert.match(page.html, /<html lang="de">/);
    assert.match(page.html, /Ihr Name/);
    assert.match(page.html, /Ich bin einverstanden, dass Workspace/);
    assert.match(page.html, /<style>:root\{--accent:#ffcc00;--on-accent:#111111\}<\/style>/);
    s.clock.advance(5_000);
    const res = await s.post(slug, { ...page.hidden, name: 'Ada', phone: '12' });
    assert.equal(res.status, 422);
    assert.match(res.html, /Bitte geben Sie eine gültige Telefonnummer ein/);
    assert.match(res.html, /Bitte stimmen Sie der Kontaktaufnahme zu/);
  });

  test('the thank-you page: WhatsApp link to the set number and the self-booking link', async () => {
    const { slug } = await s.formWorkspace();
    await s.forms.save(await s.workspace(slug), {
      whatsappNumber: '+44 20 7946 0000',
      selfBookingUrl: 'https://cal.com/sunny-roofs/consultation',
    });
    const res = await s.submit(slug, validFields(uniquePhone()));
    assert.equal(res.status, 200);
    assert.match(res.html, /href="https:\/\/wa\.me\/442079460000"/);
    assert.match(res.html, /href="https:\/\/cal\.com\/sunny-roofs\/consultation"/);
  });
});
