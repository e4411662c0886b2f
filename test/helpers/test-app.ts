import { freePort } from '../../src/db/embedded.ts';
import type { PgBoss } from 'pg-boss';
import { buildApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config/config.ts';
import { startBoss } from '../../src/jobs/boss.ts';
import { compose, type Composition } from '../../src/composition.ts';
import { createSandbox } from '../../src/sandbox/sandbox-providers.ts';
import { createLogger, type Logger } from '../../src/shared/logger.ts';
import type { VoiceProvider } from '../../src/voice/voice-provider.ts';
import type { WorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import type { Channel } from '../../src/workspaces/workspace-queries.ts';
import { parseEncryptionKey } from '../../src/workspaces/secret-box.ts';
import { OpenApiConformance } from './openapi-conformance.ts';
import { createTestDatabase, type TestDatabase } from './test-db.ts';

export const TEST_ENCRYPTION_KEY = '11'.repeat(32);

/** A clock the test moves by hand. */
export class TestClock {
  now: number;
  constructor(start = Date.parse('2026-11-22T10:00:00.000Z')) {
    this.now = start;
  }
  readonly read = (): Date => new Date(this.now);
  advance(ms: number): void {
    this.now += ms;
  }
}

export interface TestAppOptions {
  env?: Record<string, string>;
  voice?: VoiceProvider;
  clock?: TestClock;
  /** Start the relay (woken by commits, polling); off by default so tests drain it deterministically. */
  startRelay?: boolean;
  /** The sandbox's pace: `instant` by default (no waits), `life` as in production. */
  sandboxPace?: 'life' | 'instant';
}

/** The app and the composition it was built from (relay, integration log, providers, services). */
export interface TestApp extends App, Omit<Composition, 'operators'> {
  db: TestDatabase;
  boss: PgBoss;
  /** Every log line the app wrote, for checks that no personal data is logged. */
  logs: string[];
  /** The app's logger (writes into `logs`), for components a test builds beside the app. */
  log: Logger;
  createWorkspace(
    channel: Channel,
    config?: WorkspaceConfig,
    slug?: string,
  ): Promise<{ workspaceId: string; apiKey: string; apiKeyId: string; sandboxKey: string; slug: string }>;
  /** Responses of documented routes that departed from the OpenAPI document (close() throws if any). */
  openApiProblems: string[];
  close(): Promise<void>;
}

const conformance = new OpenApiConformance();

let counter = 0;

/** The real app on a fresh database of its own, with real pg-boss and outbox relay. */
export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const db = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: db.url,
    LEADINTAKE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    LOG_LEVEL: 'info',
    VAPI_BASE_URL: 'http://127.0.0.1:9',
    // Operators' passwords at scrypt's lowest accepted cost: tests hash many; the default (2^17)
    // is checked in test/api/operator-security.test.ts.
    PASSWORD_SCRYPT_LOG2_N: '14',
    ...opts.env,
  });
  const logs: string[] = [];
  const log = createLogger(config.LOG_LEVEL, { write: (line: string) => void logs.push(line) });
  // A database server out of connections must fail this file, not leave it hanging on open pools.
  const boss = await startBoss(db.url, log).catch(async (err) => {
    await db.drop().catch(() => {});
    throw err;
  });
  const clock = opts.clock?.read ?? (() => new Date());
  const sandbox = createSandbox({
    config,
    log,
    secret: parseEncryptionKey(TEST_ENCRYPTION_KEY),
    pace: opts.sandboxPace ?? 'instant',
  });
  const c = compose(
    { config, log, clock, pool: db.pool, boss },
    { sandbox, ...(opts.voice ? { voice: opts.voice } : {}) },
  );
  const { relay, workspaces } = c;
  if (opts.startRelay) relay.start();
  const app = buildApp(c);
  // Every response of a documented route, in every test, is checked against the OpenAPI
  // document; close() fails the test file on the first mismatch.
  const openApiProblems: string[] = [];
  app.http.addHook('onSend', async (request, reply, payload) => {
    if (typeof payload === 'string') {
      openApiProblems.push(
        ...conformance.problems({
          method: request.method,
          route: request.routeOptions.url ?? '',
          status: reply.statusCode,
          headers: reply.getHeaders(),
          body: payload,
        }),
      );
    }
    return payload;
  });
  await app.http.ready();
  return {
    ...c,
    ...app,
    db,
    logs,
    log,
    async createWorkspace(channel, wsConfig, slug = `ws-${process.pid}-${++counter}`) {
      const r = await workspaces.create({
        slug,
        name: `Workspace ${slug}`,
        channel,
        ...(wsConfig ? { config: wsConfig } : {}),
      });
      if (r.kind !== 'created') throw new Error('slug taken');
      return {
        workspaceId: r.workspace.id,
        apiKey: r.apiKey.key,
        apiKeyId: r.apiKey.id,
        sandboxKey: r.sandboxKey.key,
        slug,
      };
    },
    openApiProblems,
    async close() {
      await app.http.close();
      await relay.stop();
      await boss.stop({ graceful: false, close: true });
      await sandbox.close();
      await db.drop();
      if (openApiProblems.length)
        throw new Error(`Responses that do not match the OpenAPI document:\n${openApiProblems.join('\n')}`);
    },
  };
}

/**
 * A test app listening on 127.0.0.1 at a free port that is also its PUBLIC_BASE_URL (what a
 * browser test opens and what the app prints in URLs), with `options.env` added.
 */
export async function startListeningApp(options: TestAppOptions = {}): Promise<{ app: TestApp; base: string }> {
  return retryWhilePortTaken(async () => {
    const port = await freePort();
    const app = await startTestApp({
      ...options,
      env: { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ...options.env },
    });
    try {
      return { app, base: await app.http.listen({ host: '127.0.0.1', port }) };
    } catch (err) {
      await app.close();
      throw err;
    }
  });
}

/**
 * Runs `start` again, three times at most, while it fails with EADDRINUSE: an app's port is chosen
 * before the app starts (its PUBLIC_BASE_URL names it) and listened on seconds later, so a
 * concurrent test file may take it meanwhile. `start` closes what it started before it throws.
 */
export async function retryWhilePortTaken<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt === 3 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
}
