import type { PgBoss } from 'pg-boss';
import { buildApp, type App } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config/config.ts';
import { startBoss } from '../../src/jobs/boss.ts';
import { OutboxRelay } from '../../src/jobs/outbox-relay.ts';
import { createLogger, type Logger } from '../../src/shared/logger.ts';
import { VapiClient } from '../../src/voice/vapi-client.ts';
import type { VoiceProvider } from '../../src/voice/voice-provider.ts';
import type { WorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import type { Channel } from '../../src/workspaces/workspace-queries.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { WorkspaceService } from '../../src/workspaces/workspace-service.ts';
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
}

export interface TestApp extends App {
  db: TestDatabase;
  config: Config;
  boss: PgBoss;
  relay: OutboxRelay;
  workspaces: WorkspaceService;
  /** Every log line the app wrote, for checks that no personal data is logged. */
  logs: string[];
  /** The app's logger (writes into `logs`), for components a test builds beside the app. */
  log: Logger;
  createWorkspace(channel: Channel, config?: WorkspaceConfig, slug?: string): Promise<{ workspaceId: string; apiKey: string; apiKeyId: string; slug: string }>;
  close(): Promise<void>;
}

let counter = 0;

/** The real app on a fresh database of its own, with real pg-boss and outbox relay. */
export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const db = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: db.url,
    LEADINTAKE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    LOG_LEVEL: 'info',
    VAPI_BASE_URL: 'http://127.0.0.1:9',
    ...opts.env,
  });
  const logs: string[] = [];
  const log = createLogger(config.LOG_LEVEL, { write: (line: string) => void logs.push(line) });
  // A database server out of connections must fail this file, not leave it hanging on open pools.
  const boss = await startBoss(db.url, log).catch(async (err) => {
    await db.drop().catch(() => {});
    throw err;
  });
  const relay = new OutboxRelay({ pool: db.pool, boss, log, pollMs: config.OUTBOX_POLL_MS });
  if (opts.startRelay) relay.start();
  const workspaces = new WorkspaceService(db.pool, new SecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY)), config.DEFAULT_HOURLY_LIMIT);
  const voice = opts.voice ?? new VapiClient({ baseUrl: config.VAPI_BASE_URL, timeoutMs: config.VAPI_TIMEOUT_MS });
  const clock = opts.clock?.read ?? (() => new Date());
  const app = buildApp({ config, pool: db.pool, log, clock, voice, relay, workspaces });
  await app.http.ready();
  return {
    ...app,
    db,
    config,
    boss,
    relay,
    workspaces,
    logs,
    log,
    async createWorkspace(channel, wsConfig, slug = `ws-${process.pid}-${++counter}`) {
      const r = await workspaces.create({ slug, name: `Workspace ${slug}`, channel, ...(wsConfig ? { config: wsConfig } : {}) });
      if (r.kind !== 'created') throw new Error('slug taken');
      return { workspaceId: r.workspace.id, apiKey: r.apiKey.key, apiKeyId: r.apiKey.id, slug };
    },
    async close() {
      await app.http.close();
      await relay.stop();
      await boss.stop({ graceful: false, close: true });
      await db.drop();
    },
  };
}
