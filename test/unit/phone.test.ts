import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPhoneShaped, normalizePhone } from '../../src/leads/phone.ts';
import { isPhoneCountry } from '../../src/shared/phone-country.ts';

// Phone numbers as forms send them, normalised to E.164 by libphonenumber-js.

test('one number, typed four ways, is one E.164 number', () => {
  for (const typed of ['+49 30 2345 6789', '0049 30 2345 6789', '+49 (0)30 2345-6789', '011 49 30 2345 6789']) {
    assert.equal(normalizePhone(typed), '+493023456789', typed);
  }
  assert.equal(normalizePhone('+1 (555) 010-2000'), '+15550102000');
  assert.equal(normalizePhone('0049.30.1234567'), '+49301234567');
});

test('a national number is completed with the default country, whose own international prefix is understood', () => {
  assert.equal(normalizePhone('030 2345 6789', 'DE'), '+493023456789');
  assert.equal(normalizePhone('(030) 2345-6789', 'DE'), '+493023456789');
  assert.equal(normalizePhone('0049 30 2345 6789', 'DE'), '+493023456789');
  assert.equal(normalizePhone('(555) 010-2000', 'US'), '+15550102000');
  assert.equal(normalizePhone('1 555 010 2000', 'US'), '+15550102000');
  assert.equal(normalizePhone('011 49 30 2345 6789', 'US'), '+493023456789');
  // A visitor from abroad typing 00 on a US form, and an international number on a German one.
  assert.equal(normalizePhone('0049 30 2345 6789', 'US'), '+493023456789');
  assert.equal(normalizePhone('+44 20 7946 0958', 'DE'), '+442079460958');
});

test('without a default country a national number cannot be completed; bare digits read as international', () => {
  assert.equal(normalizePhone('030 2345 6789'), null);
  assert.equal(normalizePhone('49 30 2345 6789'), '+493023456789');
});

test('possibility, not validity: an unassigned range of a known country is accepted, wrong lengths are not', () => {
  assert.equal(normalizePhone('+1 555 000 0001'), '+15550000001', 'the 555 range is not valid, but possible');
  assert.equal(normalizePhone('+1 555 010'), null, 'too short for the North American plan');
  assert.equal(normalizePhone('+999 123 4567'), null, 'no such country calling code');
  assert.equal(normalizePhone('+49 30 2345 6789 1234'), null, 'more than 15 digits');
  assert.equal(normalizePhone('12345678'), null);
});

test("shape: the API's characters and 7 to 32 characters", () => {
  assert.equal(isPhoneShaped('+1 (555) 010-2000'), true);
  assert.equal(isPhoneShaped('+1 555 010 2000\n'), false);
  assert.equal(isPhoneShaped('１２３４５６７'), false, 'full-width digits are not ASCII digits');
  assert.equal(isPhoneShaped('+49 30 2345 6789 ext 12'), false);
  assert.equal(normalizePhone('+49 30 2345 6789 ext 12'), null);
  assert.equal(isPhoneShaped('12345'), false);
});

test('default countries: ISO 3166-1 alpha-2 codes with a numbering plan', () => {
  assert.equal(isPhoneCountry('DE'), true);
  assert.equal(isPhoneCountry('XX'), false);
  assert.equal(isPhoneCountry('de'), false, 'the config schema upper-cases first');
  assert.equal(normalizePhone('030 2345 6789', 'XX'), null);
});
