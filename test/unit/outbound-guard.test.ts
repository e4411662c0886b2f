import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkOutbound,
  claimsBooking,
  cleanText,
  longRun,
  MAX_PARTS,
  noChanges,
} from '../../src/agent/outbound-guard.ts';
import { splitMessage } from '../../src/agent/outbound-split.ts';

// The outbound guard as pure functions (src/agent/outbound-guard.ts); the same checks through the
// real turn worker are in test/api/whatsapp-outbound-guard.test.ts.

const base = { hasBooking: false, allowedDomains: [] as string[], limit: 1600 };

describe('outbound guard: what is refused', () => {
  it('an answer cut by the token limit (finish_reason length)', () => {
    const v = checkOutbound({ ...base, text: 'I can offer you Tuesday at', finishReason: 'length' });
    assert.deepEqual(v.kind === 'refuse' && v.problem, 'cut');
    assert.equal(checkOutbound({ ...base, text: 'Fine.', finishReason: 'stop' }).kind, 'send');
  });

  it('seven megabytes of one letter, and a long run of one character', () => {
    const huge = checkOutbound({ ...base, text: 'x'.repeat(7 * 1024 * 1024) });
    assert.equal(huge.kind === 'refuse' && huge.problem, 'degenerate');
    const run = checkOutbound({ ...base, text: `Hello ${'!'.repeat(60)}` });
    assert.equal(run.kind === 'refuse' && run.problem, 'degenerate');
    assert.ok(longRun('😀'.repeat(40)));
    assert.ok(!longRun(`${'-'.repeat(10)} fine ${'.'.repeat(3)}`));
  });

  it('an answer that is empty once markup and placeholders are gone', () => {
    const v = checkOutbound({ ...base, text: '<script>alert(1)</script> {{1}} <b></b>' });
    assert.equal(v.kind === 'refuse' && v.problem, 'empty');
  });

  it('a booking claim when the lead has no booking; allowed when it has one', () => {
    const claim = "You're booked for tomorrow at 10:00, reference ABC123. See you then!";
    const v = checkOutbound({ ...base, text: claim });
    assert.equal(v.kind === 'refuse' && v.problem, 'booking_claim');
    assert.equal(checkOutbound({ ...base, hasBooking: true, text: claim }).kind, 'send');
    for (const t of [
      'Your appointment is confirmed for Monday.',
      "I've booked you in for 3 pm.",
      'Booking reference: X7Y2Z9',
      'Ihr Termin ist bestätigt.',
      'Su cita está confirmada para el lunes.',
      'Votre rendez-vous est confirmé.',
      'A sua consulta está agendada.',
    ])
      assert.ok(claimsBooking(t), t);
    for (const t of [
      'Would Tuesday at 10:00 suit you? I can book it once you confirm.',
      'Which e-mail address should the booking confirmation go to?',
      'For reference, we install in the whole region.',
    ])
      assert.ok(!claimsBooking(t), t);
  });

  it(`an answer longer than ${MAX_PARTS} messages`, () => {
    const sentence = 'This is one sentence of a very long answer about solar panels. ';
    const v = checkOutbound({ ...base, text: sentence.repeat(Math.ceil((1600 * MAX_PARTS + 100) / sentence.length)) });
    assert.equal(v.kind === 'refuse' && v.problem, 'too_long');
  });
});

describe('outbound guard: what is repaired', () => {
  it('HTML, markdown emphasis and headings, and template placeholders are removed', () => {
    const changes = noChanges();
    const out = cleanText(
      '## Good news\n**Hello** {{1}}, <script>steal()</script>see <b>this</b> __now__.',
      [],
      changes,
    );
    assert.equal(out, 'Good news\nHello, see this now.');
    assert.deepEqual({ ...changes, links: [] }, { html: 3, markdown: 3, placeholders: 1, links: [] });
  });

  it("WhatsApp's own *bold* and _italic_ stay; an e-mail address is not a link", () => {
    assert.equal(
      cleanText('*Great* _news_: write to jane.doe@example.com', []),
      '*Great* _news_: write to jane.doe@example.com',
    );
  });

  it('links only to the allowed domains and their subdomains; others removed, their host recorded', () => {
    const changes = noChanges();
    const out = cleanText(
      'Book at https://book.solar.example/slot?x=1, ' +
        'not http://evil.example/p or www.phish.test/login or evil.com. [Here](https://evil.example/a).',
      ['solar.example'],
      changes,
    );
    assert.equal(out, 'Book at https://book.solar.example/slot?x=1, not or or. Here.');
    assert.deepEqual(changes.links, ['evil.example', 'www.phish.test', 'evil.com']);
    assert.equal(cleanText('Visit https://solar.example.', []), 'Visit.');
  });
});

describe('outbound guard: links right after italics, dots, a dash or @', () => {
  const send = (text: string, allowedDomains: string[] = []) => {
    const v = checkOutbound({ ...base, allowedDomains, text });
    assert.equal(v.kind, 'send', text);
    return v.kind === 'send' ? { text: v.parts.join(' '), links: v.changes.links } : { text: '', links: [] };
  };

  it('are links: removed and their host recorded', () => {
    for (const [text, out, host] of [
      ['Pay here: _www.evil.com/pay_', 'Pay here:', 'www.evil.com'],
      ['Pay here: _evil.com/pay_', 'Pay here:', 'evil.com'],
      ['Pay here: ...evil.com/pay', 'Pay here:...', 'evil.com'],
      ['Pay at @evil.com/pay', 'Pay at', 'evil.com'],
      ['Pay at -evil.com/pay', 'Pay at -', 'evil.com'],
      ['Pay at 192.168.0.1/pay', 'Pay at', '192.168.0.1'],
      ['Pay at _evil.com_ today.', 'Pay at today.', 'evil.com'],
      ['Pay at *evil.com/pay* today.', 'Pay at today.', 'evil.com'],
      ['Pay at bank.com@evil.com/pay', 'Pay at bank.com@', 'evil.com'],
    ] as const)
      assert.deepEqual(send(text), { text: out, links: [host] }, text);
    const changes = noChanges();
    assert.equal(cleanText('192.168.0.1/pay', [], changes), '');
    assert.deepEqual(changes.links, ['192.168.0.1']);
    const bare = checkOutbound({ ...base, text: '192.168.0.1/pay' });
    assert.equal(bare.kind === 'refuse' && bare.problem, 'empty');
  });

  it('a link to an allowed domain in italics is kept, with its markers', () => {
    for (const text of [
      'Book here: _www.solar.example/book_',
      'Book here: _solar.example/book_ or _https://book.solar.example/slot_.',
    ])
      assert.deepEqual(send(text, ['solar.example']), { text, links: [] }, text);
  });

  it('e-mail addresses, numbers, times and abbreviations are not links', () => {
    for (const text of [
      'Write to ada@example.com, ada@mail.example.com or jane.doe@my-site.co.uk.',
      'Or _ada@example.com_, john.me@example.com, ada_b@example.de, ada+solar@example.org ' +
        'or info.de+leads@example.org.',
      'It takes 1.5 hours, e.g. at 10.30 or 14:00, i.e. soon. About 5.99/month, 2.5kW/m2, version 2.0.1.',
      'The inverter runs firmware v1.2.3.4/arm64.',
      '_Thanks_ for your time... talk soon - the team.',
    ])
      assert.deepEqual(send(text), { text, links: [] }, text);
  });
});

describe('outbound guard: long answers split at sentence boundaries', () => {
  it('parts within the limit, each ending a sentence, nothing lost or cut', () => {
    const sentences = Array.from({ length: 80 }, (_, i) => `Sentence number ${i + 1} tells you something useful 👍.`);
    const text = sentences.join(' ');
    const parts = splitMessage(text, 1600);
    assert.ok(parts.length > 1);
    for (const p of parts) {
      assert.ok(p.length <= 1600);
      assert.ok(p.endsWith('👍.'), p.slice(-20));
      assert.ok(!p.includes('\uFFFD') && !p.endsWith('…'));
    }
    assert.equal(parts.join(' '), text);
    const v = checkOutbound({ ...base, text });
    assert.deepEqual(v.kind === 'send' && v.parts, parts);
  });

  it('a sentence longer than the limit is split between words, a word between graphemes', () => {
    const words = Array.from({ length: 400 }, () => 'word').join(' ');
    for (const p of splitMessage(words, 100)) assert.ok(p.length <= 100);
    const flags = splitMessage('🇩🇪'.repeat(30), 10);
    for (const p of flags) assert.ok(p.length <= 10 && /^(?:🇩🇪)+$/u.test(p), p);
    assert.equal(flags.join(''), '🇩🇪'.repeat(30));
  });

  it('a short answer is one part, trimmed', () => {
    assert.deepEqual(splitMessage('  Hi there.  ', 1600), ['Hi there.']);
  });
});
