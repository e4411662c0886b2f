// The embedded server's output goes into our debug log; PostgreSQL's DETAIL and STATEMENT lines
// carry row values, which are a lead's data.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pgOutputLine } from '../../src/db/embedded.ts';

test('row values of unique and check violations are dropped', () => {
  const out = pgOutputLine(
    [
      '2025-01-01 10:00:00.000 UTC [42] ERROR:  duplicate key value violates unique constraint "leads_email_key"',
      '2025-01-01 10:00:00.000 UTC [42] DETAIL:  Key (workspace_id, email)=(7, ada@example.com) already exists.',
      '2025-01-01 10:00:00.000 UTC [43] ERROR:  new row for relation "leads" ' +
        'violates check constraint "leads_name_check"',
      '2025-01-01 10:00:00.000 UTC [43] DETAIL:  Failing row contains (12, Ada Lovelace, +49 151 1234 5678, (none)).',
      '2025-01-01 10:00:00.000 UTC [43] STATEMENT:  insert into leads values ($1, $2, $3)',
      '',
    ].join('\n'),
  );
  for (const value of ['ada@example.com', 'Ada Lovelace', '1234 5678'])
    assert.ok(!out.includes(value), `${value} in ${out}`);
  assert.match(out, /DETAIL: {2}Key \(workspace_id, email\)=\(\[redacted\]\) already exists\./);
  assert.match(out, /DETAIL: {2}Failing row contains \(\[redacted\]\)\.\n/);
  assert.match(out, /STATEMENT: {2}insert into leads values \(\$1, \$2, \$3\)$/);
});

test('e-mail addresses and phone numbers elsewhere in the output are scrubbed', () => {
  assert.equal(
    pgOutputLine(' ERROR:  invalid input value: "ada@example.com" or "+4915112345678"\n'),
    'ERROR:  invalid input value: "[email]" or "[phone]"',
  );
  assert.equal(pgOutputLine(new Error('role "x" failed for ada@example.com')), 'Error: role "x" failed for [email]');
});
