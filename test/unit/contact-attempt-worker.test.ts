import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PgBoss } from 'pg-boss';
import { startContactAttemptWorker } from '../../src/contact-plan/contact-attempt-worker.ts';
import type { ContactPlanService } from '../../src/contact-plan/contact-plan-service.ts';
import { createLogger } from '../../src/shared/logger.ts';

// The contact-attempt queue has no dead letter: an attempt that throws is retried by pg-boss, and
// on its last retry the lead goes to a person instead of its plan staying in flight.

async function handlerWith(service: Partial<ContactPlanService>) {
  let handler: ((jobs: unknown[]) => Promise<void>) | undefined;
  const boss = {
    work: async (_queue: string, _options: unknown, fn: (jobs: unknown[]) => Promise<void>) => {
      handler = fn;
      return 'worker-id';
    },
  } as unknown as PgBoss;
  const log = createLogger('silent', { write: () => true } as unknown as NodeJS.WritableStream);
  await startContactAttemptWorker({ boss, service: service as ContactPlanService, log, pollSeconds: 1 });
  return handler!;
}

const job = (retryCount: number) => ({ id: 'j1', data: { leadId: 'lead-1', step: 3 }, retryLimit: 10, retryCount });

test('an attempt that throws with retries left is retried; on the last retry the lead is handed over', async () => {
  const handedOver: unknown[] = [];
  const run = await handlerWith({
    run: async () => {
      throw new Error('settings cannot be read for +4915112345678');
    },
    handOverFailedStep: async (...args: unknown[]) => {
      handedOver.push(args);
      return true;
    },
  });
  await assert.rejects(run([job(3)]), /settings cannot be read/);
  assert.deepEqual(handedOver, []);
  await run([job(10)]);
  assert.deepEqual(handedOver, [['lead-1', 3, 'the attempt kept failing: settings cannot be read for [phone]']]);
});
