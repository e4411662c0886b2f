// What the audit found reaching the logs: passwords and access tokens under their own names,
// personal data two objects down, and credentials inside URLs, webhook secrets and Meta tokens in
// free text (error messages).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger, scrubText } from '../../src/shared/logger.ts';

function capture() {
  const lines: string[] = [];
  const log = createLogger('info', { write: (line: string) => void lines.push(line) });
  return { log, lines };
}

test('passwords, access tokens and personal data two levels down are censored', () => {
  const { log, lines } = capture();
  log.info(
    {
      password: 'hunter2',
      accessToken: 'tok-top-level',
      config: { password: 'pw-one-down' },
      nested: { deep: { email: 'ada@example.de', phone: '+4915112345678', accessToken: 'tok-two-down' } },
      leads: [{ phone: '+4915187654321' }],
    },
    'x',
  );
  assert.equal(lines.length, 1);
  for (const secret of [
    'hunter2',
    'tok-top-level',
    'pw-one-down',
    'ada@example.de',
    '+4915112345678',
    'tok-two-down',
    '+4915187654321',
  ])
    assert.ok(!lines[0]!.includes(secret), `${secret} in ${lines[0]}`);
  const line = JSON.parse(lines[0]!);
  assert.equal(line.password, '[redacted]');
  assert.equal(line.accessToken, '[redacted]');
  assert.deepEqual(line.nested.deep, { email: '[redacted]', phone: '[redacted]', accessToken: '[redacted]' });
  assert.deepEqual(line.leads, [{ phone: '[redacted]' }]);
});

test('credentials in a URL inside an error message are masked', () => {
  const { log, lines } = capture();
  log.error({ err: new Error('connect failed: postgres://leadintake:s3cretpw@db.internal:5432/app') }, 'x');
  assert.ok(!lines[0]!.includes('s3cretpw'), lines[0]);
  assert.ok(!lines[0]!.includes('leadintake:'), lines[0]);
  assert.equal(JSON.parse(lines[0]!).err.message, 'connect failed: postgres://[redacted]@db.internal:5432/app');
});

test('free text is scrubbed of URL credentials, webhook secrets and Meta access tokens', () => {
  assert.equal(scrubText('dial postgres://u:pw2@localhost/x'), 'dial postgres://[redacted]@localhost/x');
  assert.equal(scrubText('at https://user:p%40ss@db.example.com/x'), 'at https://[redacted]@db.example.com/x');
  assert.equal(scrubText('signed with whsec_MfKQ9r8GKYqrTwjUPD8ILPZIK2LqT'), 'signed with whsec_[redacted]');
  assert.equal(scrubText('token EAAGm0PX4ZCpsBAKZCzYxZAbc123DEF456 expired'), 'token EAA[redacted] expired');
  // What is not a credential stays.
  assert.equal(scrubText('EAAB short, https://example.com/path?a=b'), 'EAAB short, https://example.com/path?a=b');
});
