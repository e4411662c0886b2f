// "The lead gave it" (bookConsult's check on an e-mail, phone or name other than the lead's stored
// one): the value must equal a whole token of what the lead wrote or said, never a piece of one.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { leadGaveEmail, leadGavePhone, leadGaveText } from '../../src/agent/conversation-scope.ts';

describe('leadGaveEmail', () => {
  test('an address that is only part of what the lead wrote is refused', () => {
    // The attacker owns example.co, corp.com's bob, or example.com while the lead is at example.com.au.
    assert.equal(leadGaveEmail(['my email is ada@example.com'], 'ada@example.co'), false);
    assert.equal(leadGaveEmail(['Write to jim.bob@corp.com please'], 'bob@corp.com'), false);
    assert.equal(leadGaveEmail(['ada@example.com.au is mine'], 'ada@example.com'), false);
    assert.equal(leadGaveEmail(['ada at example dot com dot au'], 'ada@example.com'), false);
    assert.equal(leadGaveEmail(['my email is ada@example.com'], 'mail'), false);
  });

  test('the address the lead wrote or said is accepted, whatever the case and punctuation around it', () => {
    assert.equal(leadGaveEmail(['my email is ada@example.com'], 'ada@example.com'), true);
    assert.equal(leadGaveEmail(['Send it to Ada.Work@Example.org.'], 'ada.work@example.org'), true);
    assert.equal(leadGaveEmail(['<ada@example.com>, thanks!'], 'ADA@example.com'), true);
    assert.equal(leadGaveEmail(['hi', '(ada+solar@example.com)'], 'ada+solar@example.com'), true);
    assert.equal(leadGaveEmail(['Send it to ada dot work at example dot org please.'], 'ada.work@example.org'), true);
    assert.equal(leadGaveEmail(['it is a d a at example dot com'], 'ada@example.com'), true);
    assert.equal(leadGaveEmail(['ada @ example.com'], 'ada@example.com'), true);
  });
});

describe('leadGavePhone', () => {
  test('a number the lead wrote, nationally or with its country code, is accepted', () => {
    assert.equal(leadGavePhone(['Call me on +49 30 1234567'], '+49301234567'), true);
    assert.equal(leadGavePhone(['Call me on 030 1234567.'], '+49 30 1234567'), true);
    assert.equal(leadGavePhone(['Call me on +49 (0)30 123-4567'], '030 1234567'), true);
    assert.equal(leadGavePhone(['my work number: (415) 555-0199, thanks'], '+14155550199'), true);
  });

  test('a number joined from two numbers in one message is refused', () => {
    assert.equal(leadGavePhone(['My PIN is 4155 and my number is 550199'], '+14155550199'), false);
    assert.equal(leadGavePhone(['Order 030123, customer 4567'], '+49301234567'), false);
    assert.equal(leadGavePhone(['0301234\n567'], '+49301234567'), false);
    assert.equal(leadGavePhone(['30123, 4567'], '030 1234567'), false);
  });

  test('a number with more in front than a country code is refused, and so is a short one', () => {
    assert.equal(leadGavePhone(['ref 99991234567'], '+1 234567'), false);
    assert.equal(leadGavePhone(['ref 1234 5554 4301234567'], '+49 30 1234567'), false);
  });
});

describe('leadGaveText (a name)', () => {
  test('only whole words, in order, count', () => {
    assert.equal(leadGaveText(['yes'], 'e'), false);
    assert.equal(leadGaveText(['Hello, yes please.'], 'Yes Please'), true);
    assert.equal(leadGaveText(['I am Adam'], 'Ada'), false);
    assert.equal(leadGaveText(['King, Ada'], 'Ada King'), false);
    assert.equal(leadGaveText(['', ' '], ' '), false);
  });

  test('a name the lead gave is accepted whatever the case, spacing and punctuation', () => {
    assert.equal(leadGaveText(["Actually it's Ada  King, not Lovelace."], 'ada king'), true);
    assert.equal(leadGaveText(['Book it for Seán O’Brien-Murphy please'], 'Seán O’Brien-Murphy'), true);
    assert.equal(leadGaveText(['Name: Dr. Ada King'], 'Dr Ada King'), true);
  });
});
