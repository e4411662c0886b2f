import assert from 'node:assert/strict';
import { test } from 'node:test';
import { demoBanner } from '../../src/sandbox/demo-workspaces.ts';

// The first thing a newcomer reads (npm start): every outcome row says what happens on both
// channels; a row with nothing special for one of them says it books, never "null".
test('the demo banner names an outcome for every number on both channels', () => {
  const keys = [
    { channel: 'whatsapp' as const, slug: 'demo-whatsapp', key: 'li_test_wa' },
    { channel: 'voice' as const, slug: 'demo-voice', key: 'li_test_voice' },
  ];
  const banner = demoBanner('http://127.0.0.1:3000', keys, null);
  assert.doesNotMatch(banner, /\b(null|undefined)\b/);
  assert.match(banner, /…0007 {2}WhatsApp: .*; voice: books, like any other number/);
});
