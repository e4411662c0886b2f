// The voice channel's pure pieces: the transcript format of `voiceCall`, how a server message is
// read (artifact and analysis first, legacy mirrors second), the HMAC plan, and our tools cut to
// Vapi's JSON Schema subset. No database, no HTTP.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, test } from 'node:test';
import { buildTranscript } from '../../src/voice/call-transcript.ts';
import { hmacPlanWithDefaults, signVapiHmac, verifyVapiHmac } from '../../src/voice/vapi/vapi-hmac.ts';
import { parseVapiMessage } from '../../src/voice/vapi/vapi-message.ts';
import { serverSecretOf, vapiServerUrls } from '../../src/voice/vapi/vapi-server-settings.ts';
import { validateCreateCall } from '../../src/simulators/vapi/vapi-simulator-validation.ts';
import { toVapiSchema, vapiCallTools } from '../../src/voice/vapi/vapi-tools.ts';

const parse = (message: Record<string, unknown>) => parseVapiMessage(Buffer.from(JSON.stringify({ message }))).message;

describe('transcript (voiceCall.transcript)', () => {
  test("from the message list: system and tool messages left out, one speaker's messages joined into a turn", () => {
    const messages = [
      { role: 'system', message: 'You are Mia.' },
      { role: 'bot', message: 'Hi Ada!' },
      { role: 'bot', message: '  Is now a good time? ' },
      { role: 'user', message: 'Yes.\n\nGo ahead.' },
      { role: 'tool_calls', message: '', toolCalls: [{ id: 'x' }] },
      { role: 'tool_call_result', name: 'listSlots', result: 'slots' },
      { role: 'assistant', message: 'Monday at nine?' },
      { role: 'user', message: '   ' },
      { role: 'tool', content: '{"ok":true}' },
      { role: 'user', content: 'Perfect.' },
    ];
    assert.equal(
      buildTranscript(messages, 'AI: ignored when there are messages'),
      'Assistant: Hi Ada! Is now a good time?\n\nLead: Yes. Go ahead.\n\nAssistant: Monday at nine?\n\nLead: Perfect.',
    );
  });

  test("from Vapi's AI:/User: text when there is no message list; continuation lines stay in their turn", () => {
    const text =
      'AI: Hello, this is Mia.\nUser: Hi.\nUser: Who is this?\nAI: Mia from Sunny Roofs.\nwe spoke last week\n';
    assert.equal(
      buildTranscript(undefined, text),
      'Assistant: Hello, this is Mia.\n\nLead: Hi. Who is this?\n\nAssistant: Mia from Sunny Roofs. we spoke last week',
    );
    assert.equal(buildTranscript([], text), buildTranscript(undefined, text), 'an empty list falls back to the text');
  });

  test('nothing said: null', () => {
    assert.equal(buildTranscript([{ role: 'system', message: 'prompt' }], ''), null);
    assert.equal(buildTranscript(undefined, undefined), null);
  });
});

describe('reading server messages', () => {
  const call = {
    id: 'call-1',
    assistantOverrides: { metadata: { leadId: 'A0E1B2C3-0000-4000-8000-000000000001', workspaceId: 'not-a-uuid' } },
  };

  test('the call and the metadata we sent come back as the call reference (malformed ids dropped)', () => {
    assert.deepEqual(parse({ type: 'hang', call }), {
      type: 'other',
      name: 'hang',
      call: { callId: 'call-1', leadId: 'a0e1b2c3-0000-4000-8000-000000000001', workspaceId: null },
    });
  });

  test('end-of-call-report: artifact and analysis win over the legacy mirrors', () => {
    const m = parse({
      type: 'end-of-call-report',
      call,
      endedReason: 'customer-ended-call',
      startedAt: '2050-01-01T10:00:00.000Z',
      endedAt: '2050-01-01T10:01:30.600Z',
      artifact: {
        messages: [{ role: 'bot', message: 'From the artifact.' }],
        transcript: 'AI: text',
        recordingUrl: 'https://r.example/a.wav',
      },
      analysis: { summary: 'Artifact summary.' },
      summary: 'Legacy summary.',
      transcript: 'AI: legacy',
      recordingUrl: 'https://r.example/legacy.wav',
      messages: [{ role: 'bot', message: 'Legacy.' }],
    });
    assert.ok(m.type === 'end-of-call-report');
    assert.deepEqual(m.report, {
      endedReason: 'customer-ended-call',
      startedAt: new Date('2050-01-01T10:00:00.000Z'),
      endedAt: new Date('2050-01-01T10:01:30.600Z'),
      durationSeconds: null,
      summary: 'Artifact summary.',
      transcript: 'Assistant: From the artifact.',
      recordingUrl: 'https://r.example/a.wav',
    });
  });

  test(
    'end-of-call-report: ' + 'legacy fields, the call object and the mono recording as fallbacks; durations rounded',
    () => {
      const m = parse({
        type: 'end-of-call-report',
        call: { ...call, endedReason: 'voicemail', startedAt: '2050-01-01T10:00:00Z', endedAt: '2050-01-01T10:00:20Z' },
        artifact: { recording: { mono: { combinedUrl: 'https://r.example/mono.wav' } } },
        analysis: {},
        summary: '  ',
        transcript: 'AI: Please call back.',
        durationMs: 20_499,
      });
      assert.ok(m.type === 'end-of-call-report');
      assert.deepEqual(m.report, {
        endedReason: 'voicemail',
        startedAt: new Date('2050-01-01T10:00:00Z'),
        endedAt: new Date('2050-01-01T10:00:20Z'),
        durationSeconds: 20,
        summary: null,
        transcript: 'Assistant: Please call back.',
        recordingUrl: 'https://r.example/mono.wav',
      });
      const legacy = parse({
        type: 'end-of-call-report',
        call,
        durationSeconds: 87.6,
        recordingUrl: 'javascript:alert(1)',
      });
      assert.ok(legacy.type === 'end-of-call-report');
      assert.equal(legacy.report.durationSeconds, 88);
      assert.equal(legacy.report.recordingUrl, null, 'only http(s) URLs are kept');
    },
  );

  test('fields of the wrong type are treated as absent, never a failed delivery', () => {
    const m = parse({
      type: 'end-of-call-report',
      call: { id: 7 },
      endedReason: 42,
      artifact: 'nope',
      analysis: [1],
      startedAt: 'yesterday',
      timestamp: 'now',
    });
    assert.ok(m.type === 'end-of-call-report');
    assert.equal(m.call.callId, null);
    assert.deepEqual(Object.values(m.report), [null, null, null, null, null, null, null]);
  });

  test(
    "tool-calls: the spec shape, the docs' shape, or only " +
      'toolWithToolCallList; an item without an id is kept, id null',
    () => {
      const spec = parse({
        type: 'tool-calls',
        call,
        toolCallList: [
          { id: 't1', type: 'function', function: { name: 'listSlots', arguments: '{"daysAhead":3}' } },
          { type: 'function' },
        ],
      });
      assert.ok(spec.type === 'tool-calls');
      // Kept so that it is answered (with an error), not left for Vapi to wait on.
      assert.deepEqual(spec.toolCalls, [
        { id: 't1', name: 'listSlots', arguments: '{"daysAhead":3}' },
        { id: null, name: '', arguments: undefined },
      ]);
      const docs = parse({
        type: 'tool-calls',
        call,
        toolCallList: [{ id: 't2', name: 'endConversation', arguments: {} }],
      });
      assert.ok(docs.type === 'tool-calls');
      assert.deepEqual(docs.toolCalls, [{ id: 't2', name: 'endConversation', arguments: {} }]);
      const nested = parse({
        type: 'tool-calls',
        call,
        toolWithToolCallList: [{ type: 'function', toolCall: { id: 't3', function: { name: 'listSlots' } } }],
      });
      assert.ok(nested.type === 'tool-calls');
      assert.deepEqual(nested.toolCalls, [{ id: 't3', name: 'listSlots', arguments: undefined }]);
    },
  );

  test("status-update: timestamps in ms (or seconds), the call's own start and end", () => {
    const m = parse({
      type: 'status-update',
      status: 'ended',
      endedReason: 'customer-busy',
      timestamp: 2_545_898_400,
      call: { id: 'c', startedAt: '2050-09-04T10:00:06Z' },
    });
    assert.ok(m.type === 'status-update');
    assert.deepEqual(
      { ...m, call: undefined },
      {
        type: 'status-update',
        call: undefined,
        status: 'ended',
        endedReason: 'customer-busy',
        at: new Date(2_545_898_400_000),
        callStartedAt: new Date('2050-09-04T10:00:06Z'),
        callEndedAt: null,
      },
    );
  });
});

describe('server URL and its authentication', () => {
  test('one events and one tools URL per workspace under PUBLIC_BASE_URL', () => {
    assert.deepEqual(vapiServerUrls('https://leads.example.com/', 'acme'), {
      events: 'https://leads.example.com/api/vapi/acme/events',
      tools: 'https://leads.example.com/api/vapi/acme/tools',
    });
  });

  test('the derived secret depends on the API key and the workspace; a pinned one wins', () => {
    const a = serverSecretOf('w1', { apiKey: 'key-1' });
    assert.match(a, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(serverSecretOf('w1', { apiKey: 'key-1' }), a);
    assert.notEqual(serverSecretOf('w2', { apiKey: 'key-1' }), a);
    assert.notEqual(serverSecretOf('w1', { apiKey: 'key-2' }), a);
    assert.equal(serverSecretOf('w1', { apiKey: 'key-1', serverSecret: 'pinned-0123456789' }), 'pinned-0123456789');
  });

  test(
    'HMAC: Vapi\'s default plan (hex of "{timestamp}.{body}"), ' + 'seconds or milliseconds, within the tolerance',
    () => {
      const plan = hmacPlanWithDefaults({ secretKey: 'hmac-secret-0123456789' });
      const body = Buffer.from('{"message":{"type":"hang"}}');
      const now = new Date('2050-01-01T00:00:00Z');
      for (const ts of [String(now.getTime()), String(now.getTime() / 1000)]) {
        const headers = { 'x-signature': signVapiHmac(plan, body, ts), 'x-timestamp': ts };
        assert.deepEqual(verifyVapiHmac(plan, body, headers, now, 300), { ok: true });
        assert.deepEqual(verifyVapiHmac(plan, Buffer.from(`${body} `), headers, now, 300), {
          ok: false,
          reason: 'bad signature',
        });
        assert.deepEqual(verifyVapiHmac(plan, body, headers, new Date(now.getTime() + 301_000), 300), {
          ok: false,
          reason: 'stale timestamp',
        });
        // Both directions of the tolerance: a timestamp from the future is refused as well.
        assert.deepEqual(verifyVapiHmac(plan, body, headers, new Date(now.getTime() - 301_000), 300), {
          ok: false,
          reason: 'stale timestamp',
        });
        assert.deepEqual(verifyVapiHmac(plan, body, headers, new Date(now.getTime() - 299_000), 300), { ok: true });
        assert.deepEqual(verifyVapiHmac(plan, body, headers, new Date(now.getTime() + 299_000), 300), { ok: true });
      }
      const expected = crypto.createHmac('sha256', 'hmac-secret-0123456789').update(`123.${body}`).digest('hex');
      assert.equal(signVapiHmac(plan, body, '123'), expected);
      assert.deepEqual(verifyVapiHmac(plan, body, { 'x-signature': expected }, now, 300), {
        ok: false,
        reason: 'missing timestamp',
      });
      assert.deepEqual(verifyVapiHmac(plan, body, {}, now, 300), { ok: false, reason: 'missing signature' });
    },
  );

  test('HMAC: prefix, base64, sha512 and a body-only payload', () => {
    const plan = hmacPlanWithDefaults({
      secretKey: 'aG1hYy1zZWNyZXQtYmFzZTY0',
      secretIsBase64: true,
      algorithm: 'sha512',
      signatureEncoding: 'base64',
      signaturePrefix: 'sha512=',
      payloadFormat: '{body}',
      signatureHeader: 'X-Sig',
    });
    const body = Buffer.from('{"a":1}');
    const sig = signVapiHmac(plan, body, '');
    assert.match(sig, /^sha512=[A-Za-z0-9+/]+=*$/);
    assert.deepEqual(verifyVapiHmac(plan, body, { 'x-sig': sig }, new Date(), 300), { ok: true });
    assert.deepEqual(verifyVapiHmac(plan, body, { 'x-sig': sig.replace('sha512=', '') }, new Date(), 300), {
      ok: false,
      reason: 'bad signature',
    });
  });
});

describe('our tools as Vapi function tools', () => {
  const ALLOWED = new Set([
    'type',
    'items',
    'properties',
    'description',
    'pattern',
    'format',
    'required',
    'enum',
    'title',
  ]);
  function assertVapiSchema(s: Record<string, unknown>, path: string): void {
    for (const k of Object.keys(s)) assert.ok(ALLOWED.has(k), `${path}.${k} is not in Vapi's JsonSchema`);
    assert.equal(typeof s.type, 'string', `${path}.type`);
    for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Record<string, unknown>>))
      assertVapiSchema(v, `${path}.properties.${k}`);
  }

  test("only the keys Vapi's JsonSchema allows; limits and defaults moved into the description", () => {
    const tools = vapiCallTools({ url: 'https://x.example/api/vapi/acme/tools', headers: { 'X-Vapi-Secret': 's' } });
    assert.equal(tools.length, 8);
    for (const t of tools) assertVapiSchema(t.function.parameters, t.function.name);
    const listSlots = tools.find((t) => t.function.name === 'listSlots')!.function.parameters as any;
    assert.deepEqual(listSlots.properties.daysAhead, {
      type: 'integer',
      description: 'How many days ahead to look, 1 to 30 (default 7) (from 1 to 30)',
    });
    const profile = tools.find((t) => t.function.name === 'updateLeadProfile')!.function.parameters as any;
    assert.equal(profile.properties.answers.type, 'object');
    assert.match(profile.properties.answers.description, /keys are ids, values are string or number/);
    assert.deepEqual(toVapiSchema({ type: ['number', 'string'] }), {
      type: 'string',
      description: '(number or string)',
    });
  });

  test("the simulator (Vapi's validator) accepts a call with them, and refuses what Vapi would refuse", () => {
    const server = { url: 'https://x.example/tools', timeoutSeconds: 20, headers: { 'X-Vapi-Secret': 's' } };
    const call = (tools: unknown[]) => ({
      assistantId: 'a',
      phoneNumberId: 'p',
      customer: { number: '+14155550123' },
      assistantOverrides: { server, 'tools:append': tools },
    });
    assert.deepEqual(validateCreateCall(call(vapiCallTools(server))), []);
    const raw = {
      type: 'function',
      server,
      function: {
        name: 'listSlots',
        parameters: { type: 'object', properties: { daysAhead: { type: 'integer', minimum: 1 } } },
      },
    };
    assert.deepEqual(validateCreateCall(call([raw])), [
      'assistantOverrides.tools:append.0.function.parameters.properties.daysAhead.property minimum should not exist',
    ]);
    assert.deepEqual(
      validateCreateCall({
        ...call([]),
        assistantOverrides: { server: { ...server, timeoutSeconds: 500, secret: 'x' } },
      }),
      [
        'assistantOverrides.server.property secret should not exist',
        'assistantOverrides.server.timeoutSeconds must not be greater than 300',
      ],
    );
  });
});
