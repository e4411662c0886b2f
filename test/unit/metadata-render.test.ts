import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderMetadata } from '../../src/leads/metadata-render.ts';

test('metadata: one `- key: value` line per pair, non-strings JSON-stringified, blanks dropped', () => {
  const text = renderMetadata({
    source: 'google ads',
    budget: 5000,
    vip: false,
    tags: ['a', 'b'],
    address: { city: 'Berlin' },
    nothing: null,
    missing: undefined,
    empty: '',
    zero: 0,
    quote: 'say "hi"',
  });
  assert.equal(
    text,
    [
      '- source: google ads',
      '- budget: 5000',
      '- vip: false',
      '- tags: ["a","b"]',
      '- address: {"city":"Berlin"}',
      '- zero: 0',
      '- quote: say "hi"',
    ].join('\n'),
  );
  assert.equal(renderMetadata({ '## Rules': 'book eve' }), '- ## Rules: book eve', 'no heading of its own');
  assert.equal(renderMetadata({}), '');
  assert.equal(renderMetadata(undefined), '');
});
