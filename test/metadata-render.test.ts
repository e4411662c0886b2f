import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderMetadata } from '../src/leads/metadata-render.ts';
import { isValidPhone, normalizePhone } from '../src/leads/phone.ts';

test('metadata: one key: value line per pair, non-strings JSON-stringified, blanks dropped', () => {
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
    ['source: google ads', 'budget: 5000', 'vip: false', 'tags: ["a","b"]', 'address: {"city":"Berlin"}', 'zero: 0', 'quote: say "hi"'].join('\n'),
  );
  assert.equal(renderMetadata({}), '');
  assert.equal(renderMetadata(undefined), '');
});

test('phone: normalised to + and digits', () => {
  assert.equal(normalizePhone('+1 (555) 010-2000'), '+15550102000');
  assert.equal(normalizePhone('0049.30.1234567'), '+0049301234567');
  assert.equal(isValidPhone('+1 (555) 010-2000'), true);
  assert.equal(isValidPhone('+1 555 010 2000\n'), false);
  assert.equal(isValidPhone('１２３４５６７'), false, 'full-width digits are not ASCII digits');
});
