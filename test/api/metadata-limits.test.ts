// Spec 2.2.1: every metadata pair is rendered into the agent's prompt. So the submission refuses
// metadata that could not be rendered whole (docs/API.md, "Validation"): a key over 100 characters,
// a value over 1000 (as shown), or more in total than the lead-data block's share for metadata.
// What is accepted is shown whole on both channels, however much else the lead's data holds.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { charsOf, METADATA_BLOCK_MAX_CHARS, metadataLines } from '../../src/agent/lead-data-block.ts';
import { buildAgentPrompt } from '../../src/agent/prompt.ts';
import {
  METADATA_KEY_MESSAGE,
  METADATA_SIZE_MESSAGE,
  METADATA_VALUE_MESSAGE,
} from '../../src/leads/lead-submission.ts';
import { METADATA_KEY_MAX_CHARS, METADATA_VALUE_MAX_CHARS, renderMetadata } from '../../src/leads/metadata-render.ts';
import { agentConfigSchema, withQuestionIds } from '../../src/workspaces/agent-config.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { getLead, postLead, validLead } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let key: string;
before(async () => {
  app = await startTestApp();
  ({ apiKey: key } = await app.createWorkspace('whatsapp'));
});
after(() => app.close());

const agent = withQuestionIds(agentConfigSchema.parse(SOLAR_AGENT), null);

/** Metadata whose block share is exactly `chars`: 10-character keys, plain string values. */
function metadataOf(chars: number): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  // Heading line (35) plus 9 + key + value per pair.
  let left = chars - 35;
  while (left > 0) {
    const value = Math.min(METADATA_VALUE_MAX_CHARS, left - 9 - 10);
    assert.ok(value >= 1);
    out[`key_${String(i++).padStart(6, '0')}`] = 'v'.repeat(value);
    left -= 9 + 10 + value;
  }
  assert.equal(charsOf(metadataLines(out)), chars);
  return out;
}

async function submitted(metadata: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await postLead(app.http, key, validLead({ metadata }));
  assert.equal(res.status, 201, JSON.stringify(res.body).slice(0, 500));
  const got = await getLead(app.http, key, res.body.leadId);
  assert.deepEqual(got.body.lead.metadata, metadata, 'stored and read back as sent');
  return got.body.lead.metadata;
}

async function refused(metadata: Record<string, unknown>): Promise<Array<{ path: string[]; message: string }>> {
  const res = await postLead(app.http, key, validLead({ metadata }));
  assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 500));
  assert.equal(res.body.error, 'Validation failed.');
  return res.body.issues;
}

/** Every pair shown whole: in the WhatsApp prompt, with the lead's other data as large as they get, and on voice. */
function assertShownWhole(metadata: Record<string, unknown>): void {
  const prompt = buildAgentPrompt({
    agent,
    lead: {
      name: 'n'.repeat(120),
      email: 'ada@example.com',
      goal: '<'.repeat(2000),
      metadata,
      formResponses: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`q_gone_${i}`, '>'.repeat(1000)])),
      answers: {},
      notes: 'x'.repeat(50_000),
      teamNotes: ['t'.repeat(5000)],
    },
    channel: 'whatsapp',
    now: new Date('2026-11-22T10:00:00.000Z'),
  });
  const block = prompt.slice(prompt.indexOf('\n<lead_data>\n'), prompt.indexOf('\n</lead_data>\n'));
  const shown = block.slice(block.indexOf('\nWhat else we know about this lead:\n'));
  for (const line of metadataLines(metadata)) assert.ok(shown.includes(`\n${line}`), line.slice(0, 80));
  assert.equal(
    shown.split('\n').filter((l) => l.startsWith('- ')).length,
    Object.values(metadata).filter((v) => v !== null && v !== '').length,
  );
  assert.ok(!shown.includes('left out'), 'no metadata line left out');
  const voice = renderMetadata(metadata).split('\n');
  for (const [k, v] of Object.entries(metadata)) {
    if (v === null || v === '') continue;
    assert.ok(voice.includes(`- ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`), k);
  }
}

describe('metadata limits', () => {
  test('a key of 100 and a value of 1000 characters (code points) are accepted and shown whole', async () => {
    const metadata = {
      [`${'k'.repeat(METADATA_KEY_MAX_CHARS - 1)}😀`]: `${'v'.repeat(METADATA_VALUE_MAX_CHARS - 1)}😀`,
      json: { n: 'x'.repeat(METADATA_VALUE_MAX_CHARS - 8) },
      blank: '',
      none: null,
    };
    assert.equal(JSON.stringify(metadata.json).length, METADATA_VALUE_MAX_CHARS);
    assertShownWhole(await submitted(metadata));
  });

  test(`metadata of exactly ${METADATA_BLOCK_MAX_CHARS} characters as shown is accepted and shown whole`, async () => {
    assertShownWhole(await submitted(metadataOf(METADATA_BLOCK_MAX_CHARS)));
  });

  test('one character over: a key, a value, a JSON value, the total → 400 with the issue', async () => {
    const longKey = 'k'.repeat(METADATA_KEY_MAX_CHARS + 1);
    assert.deepEqual(await refused({ [longKey]: 'v' }), [
      { path: ['metadata', longKey], message: METADATA_KEY_MESSAGE },
    ]);
    assert.deepEqual(await refused({ a: 'v'.repeat(METADATA_VALUE_MAX_CHARS + 1) }), [
      { path: ['metadata', 'a'], message: METADATA_VALUE_MESSAGE },
    ]);
    // As shown: {"n":"xx…"} is 1001 characters of JSON.
    assert.deepEqual(await refused({ obj: { n: 'x'.repeat(METADATA_VALUE_MAX_CHARS - 7) } }), [
      { path: ['metadata', 'obj'], message: METADATA_VALUE_MESSAGE },
    ]);
    assert.deepEqual(await refused(metadataOf(METADATA_BLOCK_MAX_CHARS + 1)), [
      { path: ['metadata'], message: METADATA_SIZE_MESSAGE },
    ]);
  });

  test('the total counts what the prompt shows: escapes count, blank pairs do not', async () => {
    // `<` is shown as \u003c (6 characters): 700 of them are 4200.
    assert.deepEqual(await refused({ html: '<'.repeat(700) }), [
      { path: ['metadata'], message: METADATA_SIZE_MESSAGE },
    ]);
    // A pair left out of the prompt is not limited (and is stored as sent).
    await submitted({ ['k'.repeat(500)]: null, big: '' });
  });

  test('issues come with the other fields’ issues in one answer', async () => {
    const res = await postLead(app.http, key, { ...validLead({ metadata: { a: 'v'.repeat(1001) } }), name: '' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.issues.map((i: { path: string[] }) => i.path.join('.')).sort(), ['metadata.a', 'name']);
  });
});
