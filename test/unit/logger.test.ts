// The logs' safety net: fields that can hold personal data or secrets are censored wherever a
// caller puts them, and the access logger writes the same line format to the same destination.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAccessLogger, createLogger, scrubText } from '../../src/shared/logger.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

test('phone, email and secrets are censored at the top level and one level down', () => {
  const { log, lines } = capture();
  log.info(
    {
      phone: '+15550100',
      email: 'a@example.com',
      apiKey: 'li_live_x',
      lead: { phone: '+15550100', email: 'a@example.com' },
      token: 't',
    },
    'x',
  );
  const text = JSON.stringify(lines);
  for (const secret of ['+15550100', 'a@example.com', 'li_live_x', '"t"'])
    assert.ok(!text.includes(secret), `${secret} in ${text}`);
  assert.equal(lines[0]!.phone, '[redacted]');
  assert.deepEqual(lines[0]!.lead, { phone: '[redacted]', email: '[redacted]' });
});

test('the access logger writes to the same destination at the same level, in the same format', () => {
  const { log, lines } = capture();
  const access = createAccessLogger(log);
  access.info({ reqId: 'r-1', method: 'GET', route: '/api/public/leads/:id', status: 200, ms: 1 }, 'request');
  access.debug({ reqId: 'r-2' }, 'not at info');
  assert.equal(lines.length, 1);
  const { time, pid, hostname, ...rest } = lines[0]!;
  assert.equal(typeof time, 'number');
  assert.equal(pid, process.pid);
  assert.equal(typeof hostname, 'string');
  assert.deepEqual(rest, {
    level: 30,
    reqId: 'r-1',
    method: 'GET',
    route: '/api/public/leads/:id',
    status: 200,
    ms: 1,
    msg: 'request',
  });
});

test('free text is scrubbed of phone numbers, e-mail addresses and keys', () => {
  assert.equal(
    scrubText('call +1 555 010 0999 or mail a.b@example.com with li_live_abc123'),
    'call [phone] or mail [email] with li_live_[redacted]',
  );
});
