import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { renderError as render } from '../../src/http/error-handler.ts';
import { z } from 'zod';
import { apiDocument } from '../../src/api-parts.ts';
import { buildOpenApiDocument } from '../../src/http/openapi.ts';
import { defineRoute, named } from '../../src/http/route-contract.ts';
import { parseLeadSubmission } from '../../src/leads/lead-submission.ts';
import { AppError, type ErrorCode } from '../../src/shared/errors.ts';
import { getLead, postLead, validLead } from '../helpers/http.ts';
import { OpenApiConformance } from '../helpers/openapi-conformance.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

type Json = Record<string, any>;
const SRC = path.resolve(import.meta.dirname, '../../src');
const document = apiDocument('http://127.0.0.1:3000') as Json;
const conformance = new OpenApiConformance(document);
const POST = { method: 'POST', route: '/api/public/leads' };
const GET = { method: 'GET', route: '/api/public/leads/:id' };
const ALL_HEADERS = {
  'x-request-id': crypto.randomUUID(),
  ratelimit: '"hourly";r=1;t=2',
  'ratelimit-policy': '"hourly";q=3;w=3600',
  'retry-after': '2',
};

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

function walk(value: unknown, visit: (node: Json, path: string) => void, path = '#'): void {
  if (Array.isArray(value)) value.forEach((v, i) => walk(v, visit, `${path}/${i}`));
  else if (value && typeof value === 'object') {
    visit(value as Json, path);
    for (const [k, v] of Object.entries(value)) walk(v, visit, `${path}/${k}`);
  }
}

describe('the OpenAPI document', () => {
  test('is valid OpenAPI 3.1 for a real validator', async () => {
    assert.match(document.openapi, /^3\.1\./);
    const result = await new Validator().validate(document as never);
    assert.deepEqual(result, { valid: true });
  });

  test('every $ref resolves inside the document; no 3.0 leftovers (nullable, definitions)', () => {
    const resolve = (ref: string) =>
      ref
        .slice(2)
        .split('/')
        .reduce<any>((node, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], document);
    const refs: string[] = [];
    walk(document, (node, path) => {
      if (typeof node.$ref === 'string') refs.push(node.$ref);
      assert.ok(!('nullable' in node), `nullable at ${path}`);
      assert.ok(!('definitions' in node) && !('$defs' in node), `definitions at ${path}`);
      assert.ok(!('$schema' in node) && !('$id' in node), `$schema/$id at ${path}`);
    });
    assert.ok(refs.length > 20);
    for (const ref of refs)
      assert.ok(ref.startsWith('#/components/') && resolve(ref) !== undefined, `unresolved ${ref}`);
  });

  test('both operations have an operationId, a summary, responses with examples, and the bearer scheme', () => {
    assert.deepEqual(document.components.securitySchemes.bearerAuth, {
      type: 'http',
      scheme: 'bearer',
      description: "A workspace's API key (`leadintake key create`).",
    });
    assert.deepEqual(document.security, [{ bearerAuth: [] }]);
    const post = conformance.operation('POST', POST.route)!;
    const get = conformance.operation('GET', GET.route)!;
    assert.equal(post.operationId, 'submitLead');
    assert.equal(get.operationId, 'getLead');
    assert.deepEqual(Object.keys(post.responses), [
      '201',
      '400',
      '401',
      '403',
      '404',
      '409',
      '413',
      '429',
      '500',
      '502',
      '503',
    ]);
    assert.deepEqual(Object.keys(get.responses), ['200', '401', '403', '404', '429', '500', '503']);
    assert.ok(Object.keys(post.requestBody.content['application/json'].examples).length >= 1);
    assert.ok(post.responses['201'].content['application/json'].examples.voice);
    assert.ok(get.responses['200'].content['application/json'].examples.booked);
  });

  test('the spec points: 201 oneOf, Lead and VoiceCall components, enums, formats, 3.1 nulls, limits', () => {
    const s = document.components.schemas;
    const post = conformance.operation('POST', POST.route)!;
    assert.deepEqual(post.responses['201'].content['application/json'].schema, {
      oneOf: [
        { $ref: '#/components/schemas/VoiceLeadAccepted' },
        { $ref: '#/components/schemas/WhatsappLeadAccepted' },
        // Where the spec is silent: a voice number on the do-not-contact list (docs/API.md).
        { $ref: '#/components/schemas/VoiceLeadNotCalled' },
      ],
    });
    assert.deepEqual(s.LeadResponse.properties.lead, { $ref: '#/components/schemas/Lead' });
    assert.deepEqual(s.LeadResponse.properties.voiceCall.anyOf, [
      { $ref: '#/components/schemas/VoiceCall' },
      { type: 'null' },
    ]);
    assert.deepEqual(s.Lead.properties.status, { $ref: '#/components/schemas/LeadStatus' });
    assert.deepEqual(s.LeadStatus.enum, ['new', 'in_conversation', 'booked', 'unqualified', 'needs_human']);
    assert.deepEqual(s.Lead.properties.email, { type: ['string', 'null'] });
    assert.equal(s.Lead.properties.bookingStart.anyOf[0].format, 'date-time');
    assert.deepEqual(s.Lead.properties.bookingStart.anyOf[1], { type: 'null' });
    assert.ok(s.VoiceCall.properties.status.enum.includes('ended'));
    assert.deepEqual(s.VoiceCall.properties.transcript.type, ['string', 'null']);
    assert.ok(s.Lead.required.includes('livemode') && s.Lead.properties.livemode.type === 'boolean');
    const body = s.LeadSubmission.properties;
    assert.deepEqual([body.name.minLength, body.name.maxLength], [1, 120]);
    assert.deepEqual([body.phone.minLength, body.phone.maxLength], [7, 32]);
    assert.equal(body.goal.anyOf[1].maxLength, 2000);
    assert.equal(body.consent.const, true);
    assert.deepEqual(s.LeadSubmission.required, ['name', 'phone', 'consent']);
    assert.equal(post.responses['429'].headers['Retry-After'].required, true);
    assert.deepEqual(Object.keys(post.responses['429'].headers), [
      'X-Request-Id',
      'RateLimit',
      'RateLimit-Policy',
      'Retry-After',
    ]);
    assert.deepEqual(s.DuplicatePhoneError.properties.error, { type: 'string', const: 'duplicate_phone' });
    assert.ok(s.DuplicatePhoneError.properties.leadId);
  });

  test('every error the public and admin routes send is documented with its exact string, and nothing else is', () => {
    const cases: [ErrorCode, typeof POST | typeof GET, AppError['details']?][] = [
      ['invalid_json', POST],
      ['validation_failed', POST, { issues: [{ path: ['phone'], message: 'x' }] }],
      ['consent_required', POST],
      ['bad_request', POST],
      ['missing_authorization', POST],
      ['bad_scheme', GET],
      ['invalid_key', GET],
      ['secret_key_in_browser', POST],
      ['secret_key_in_browser', GET],
      ['publishable_key_read', GET],
      ['origin_not_allowed', POST],
      ['workspace_not_found', POST],
      ['workspace_not_found', GET],
      ['lead_not_found', GET],
      ['duplicate_phone', POST, { leadId: crypto.randomUUID() }],
      ['duplicate_phone', POST],
      ['body_too_large', POST],
      ['rate_limited', POST],
      ['rate_limited', GET],
      ['internal', POST],
      ['internal', GET],
      ['voice_dispatch_failed', POST, { message: 'Bad key' }],
    ];
    // The admin API (the dashboard's) shares the vocabulary: its own errors, and the public ones it can send.
    const SIGN_IN = { method: 'POST', route: '/api/admin/session' };
    const ACT = { method: 'POST', route: '/api/admin/workspaces/:slug/leads/:id/take-over' };
    const adminCases: [ErrorCode, typeof SIGN_IN, AppError['details']?][] = [
      ['invalid_json', SIGN_IN],
      ['validation_failed', SIGN_IN, { issues: [{ path: ['email'], message: 'x' }] }],
      ['bad_request', SIGN_IN],
      ['body_too_large', ACT],
      ['unsupported_media_type', ACT],
      ['sign_in_failed', SIGN_IN],
      ['sign_in_throttled', SIGN_IN],
      ['not_signed_in', ACT],
      ['csrf_failed', ACT],
      ['forbidden', ACT],
      ['workspace_not_found', ACT],
      ['lead_not_found', ACT],
      ['lead_status_conflict', ACT, { message: 'booked' }],
      ['lead_taken', ACT, { message: 'Taken over by Ada a moment ago.' }],
      ['internal', ACT],
      ['webhook_endpoint_not_found', { method: 'DELETE', route: '/api/admin/workspaces/:slug/webhooks/:id' }],
      ['api_key_not_found', { method: 'DELETE', route: '/api/admin/workspaces/:slug/keys/:id' }],
      ['api_key_not_found', { method: 'DELETE', route: '/api/admin/workspaces/:slug/intake/keys/:id' }],
      ['lead_source_not_found', { method: 'DELETE', route: '/api/admin/workspaces/:slug/intake/sources/:id' }],
      ['member_not_found', { method: 'DELETE', route: '/api/admin/workspaces/:slug/team/members/:id' }],
      ['last_owner', { method: 'DELETE', route: '/api/admin/workspaces/:slug/team/members/:id' }],
      ['already_member', { method: 'POST', route: '/api/admin/workspaces/:slug/team/invites' }],
      ['invite_not_found', { method: 'POST', route: '/api/admin/invites/lookup' }],
      ['invite_account_exists', { method: 'POST', route: '/api/admin/workspaces/:slug/invites/accept' }],
      ['invite_other_account', { method: 'POST', route: '/api/admin/workspaces/:slug/invites/accept' }],
      ['dead_letter_not_found', { method: 'POST', route: '/api/admin/workspaces/:slug/dead-letters/:id/retry' }],
      ['note_not_found', { method: 'DELETE', route: '/api/admin/workspaces/:slug/leads/:id/notes/:noteId' }],
      ['settings_conflict', { method: 'PUT', route: '/api/admin/workspaces/:slug/form' }],
      ['limit_reached', { method: 'POST', route: '/api/admin/workspaces/:slug/webhooks' }, { message: 'At most 10.' }],
      ['limit_reached', { method: 'POST', route: '/api/admin/workspaces/:slug/keys' }, { message: 'At most 20.' }],
      ['rate_limited', ACT, { retryAfterSeconds: 30 }],
      [
        'contact_plan_conflict',
        { method: 'POST', route: '/api/admin/workspaces/:slug/leads/:id/contact-plan/skip' },
        { message: 'No attempt is pending.' },
      ],
      ['too_many_streams', { method: 'GET', route: '/api/admin/workspaces/:slug/events' }],
    ];
    const sent = new Set<string>();
    for (const [code, op, details] of [...cases, ...adminCases]) {
      const { status, body } = render(new AppError(code, details));
      sent.add(String(body.error));
      assert.deepEqual(
        conformance.problems({ ...op, status, headers: ALL_HEADERS, body: JSON.stringify(body) }),
        [],
        code,
      );
    }
    const documented = new Set<string>();
    walk(document.components.schemas, (node, path) => {
      if (!/Error\/properties\/error$/.test(path)) return;
      for (const v of node.enum ?? [node.const]) documented.add(v);
    });
    documented.delete('Service is busy; retry shortly.'); // sent by the load shedder, not by render()
    assert.deepEqual([...documented].sort(), [...sent].sort());
  });

  test('every example in the document matches its schema, and request examples pass validation', () => {
    for (const [route, item] of Object.entries<Json>(document.paths)) {
      for (const [method, op] of Object.entries<Json>(item)) {
        for (const [status, response] of Object.entries<Json>(op.responses)) {
          for (const [name, ex] of Object.entries<Json>(response.content?.['application/json']?.examples ?? {})) {
            const r = {
              method: method.toUpperCase(),
              route: route.replace(/\{(\w+)\}/g, ':$1'),
              status: Number(status),
              headers: ALL_HEADERS,
              body: JSON.stringify(ex.value),
            };
            assert.deepEqual(conformance.problems(r), [], `${method} ${route} ${status} ${name}`);
          }
        }
        for (const ex of Object.values<Json>(op.requestBody?.content['application/json'].examples ?? {}))
          assert.doesNotThrow(() => parseLeadSubmission(ex.value));
      }
    }
  });

  test('the conformance check fails a response that departs from the document', () => {
    const ok = { ok: true, leadId: crypto.randomUUID(), status: 'new', messageQueued: true };
    assert.deepEqual(
      conformance.problems({ ...POST, status: 201, headers: ALL_HEADERS, body: JSON.stringify(ok) }),
      [],
    );
    assert.equal(
      conformance.problems({
        ...POST,
        status: 201,
        headers: ALL_HEADERS,
        body: JSON.stringify({ ...ok, status: 'in_progress' }),
      }).length,
      1,
    );
    assert.equal(
      conformance.problems({ ...POST, status: 201, headers: { 'x-request-id': 'x' }, body: JSON.stringify(ok) }).length,
      2,
    );
    assert.equal(conformance.problems({ ...POST, status: 418, headers: ALL_HEADERS, body: '{}' }).length, 1);
    assert.equal(
      conformance.problems({
        ...GET,
        status: 404,
        headers: ALL_HEADERS,
        body: JSON.stringify({ ok: false, error: 'Not found.' }),
      }).length,
      1,
    );
  });
});

describe('one contract per route', () => {
  // The public and admin routes are registered from their contracts (route-contract.ts), which
  // the document is built from: a route written with scope.get/post/… would be served undocumented.
  const routeFiles = () => {
    const admin = fs
      .readdirSync(path.join(SRC, 'admin'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => path.join(SRC, 'admin', f));
    return [...admin, path.join(SRC, 'leads/lead-routes.ts')];
  };
  const handWritten = (files: string[]) =>
    files.flatMap((file) =>
      [
        ...fs.readFileSync(file, 'utf8').matchAll(/\.(get|post|put|patch|delete|route)(<[^>]*>)?\(\s*[`'"]\/api\//g),
      ].map((m) => `${path.relative(SRC, file)}: ${m[0]}`),
    );

  test('no route under /api/public or /api/admin is registered by hand', () => {
    assert.deepEqual(handWritten(routeFiles()), []);
  });

  test('the check sees a route registered by hand (it can fail)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'contract-probe-'));
    try {
      const probe = path.join(dir, 'probe.ts');
      fs.writeFileSync(
        probe,
        "scope.get<{ Params: { slug: string } }>('/api/admin/workspaces/:slug/x', async () => ({}));\n",
      );
      assert.equal(handWritten([probe]).length, 1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('every operation of the document is a route the app serves, with the same method and path', () => {
    let operations = 0;
    for (const [route, item] of Object.entries<Json>(document.paths)) {
      for (const method of Object.keys(item)) {
        operations++;
        const url = route.replace(/\{(\w+)\}/g, ':$1');
        assert.ok(
          app.http.hasRoute({ method: method.toUpperCase() as 'GET', url }),
          `${method} ${route} is documented but not served`,
        );
      }
    }
    assert.ok(operations > 50);
  });

  test('a component name or an operationId used twice fails the build, not the client generator', () => {
    const contract = (operationId: string, answer: z.ZodType) =>
      defineRoute({
        method: 'GET',
        url: `/x/${operationId}`,
        operationId,
        summary: 'x',
        tags: [],
        responses: { '200': { description: 'x', body: named('Same', answer) } },
      });
    const one = z.object({ a: z.string() });
    assert.doesNotThrow(() => buildOpenApiDocument('http://x', [{ routes: [contract('a', one), contract('b', one)] }]));
    assert.throws(
      () =>
        buildOpenApiDocument('http://x', [
          { routes: [contract('a', one), contract('b', z.object({ b: z.string() }))] },
        ]),
      /two schemas are named output:Same/,
    );
    assert.throws(
      () => buildOpenApiDocument('http://x', [{ routes: [contract('a', one), contract('a', one)] }]),
      /two operations are named a/,
    );
  });

  test('a parameter is documented from its zod schema: description, requiredness, limits', () => {
    const inbox = conformance.operation('GET', '/api/admin/workspaces/:slug/leads')!;
    const param = (name: string) => inbox.parameters.find((p: Json) => p.name === name);
    assert.deepEqual(param('slug'), {
      name: 'slug',
      in: 'path',
      required: true,
      description: 'The workspace.',
      schema: { type: 'string' },
    });
    assert.deepEqual(param('limit').schema, { type: 'integer', minimum: 1, maximum: 100 });
    assert.equal(param('limit').required, false);
    assert.match(param('q').description, /at least 3 characters/);
    const take = conformance.operation('POST', '/api/admin/workspaces/:slug/leads/:id/take-over')!;
    assert.deepEqual(
      take.parameters.map((p: Json) => `${p.in}:${p.name}`),
      ['path:slug', 'path:id', 'header:X-CSRF-Token'],
    );
    assert.ok(take.responses['429'].description.includes('ADMIN_RATE_LIMIT_PER_MINUTE'));
  });
});

describe('real responses match the document', () => {
  test('201, 200, 400, 404, 409, 413 and 429 of a WhatsApp workspace, headers included', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const key = await app.workspaces.createKey(ws.slug, { hourlyLimit: 9 });
    const lead = validLead({ metadata: { nested: { list: [1, 'two', null, true] } } });
    const created = await postLead(app.http, key!.key, lead);
    assert.equal(created.status, 201);
    const statuses = [created.status];
    statuses.push((await getLead(app.http, key!.key, created.body.leadId)).status);
    statuses.push((await postLead(app.http, key!.key, { ...lead, phone: 'x' })).status);
    statuses.push((await postLead(app.http, key!.key, 'not json')).status);
    statuses.push((await getLead(app.http, key!.key, crypto.randomUUID())).status);
    statuses.push((await postLead(app.http, key!.key, lead)).status);
    statuses.push((await postLead(app.http, key!.key, { ...lead, goal: 'x'.repeat(70_000) })).status);
    statuses.push((await postLead(app.http, key!.key, validLead())).status);
    statuses.push((await getLead(app.http, key!.key, created.body.leadId)).status);
    const limited = await getLead(app.http, key!.key, created.body.leadId);
    statuses.push(limited.status);
    assert.deepEqual(statuses, [201, 200, 400, 400, 404, 409, 413, 201, 200, 429]);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    // The test app checks each of these against the document as it is sent.
    assert.deepEqual(app.openApiProblems, []);
  });
});
