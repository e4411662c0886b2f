import crypto from 'node:crypto';
import pg from 'pg';

// The embedded server's two roles. `postgres`, the superuser, logs in with a generated password
// and is used only here, to create or repair the service's role. The service's role logs in with
// a password of its own and owns the service's database and every object in it (our migrations,
// pg-boss's schema): it can do what the service needs and nothing only a superuser can (no COPY
// TO PROGRAM, no ALTER SYSTEM, no reading the server's files, no other role's tables).

export const SUPERUSER = 'postgres';
export const SERVICE_ROLE = 'leadintake';
export const DATABASE = 'leadintake';
/** The superuser's password in data folders written before it was generated. */
const LEGACY_PASSWORD = 'postgres';

export interface RoleSetup {
  port: number;
  superuserPassword: string;
  servicePassword: string;
  /** CREATEDB for the service's role: the test runner's cluster, where it clones a database per test file. */
  createDatabases: boolean;
}

export function roleUrl(port: number, role: string, password: string, database: string): string {
  return `postgres://${role}:${password}@127.0.0.1:${port}/${database}`;
}

/**
 * Makes the cluster what the service expects: the superuser's password is the generated one (a
 * data folder of an earlier version still has the legacy password: it is replaced), the service's
 * role exists with its password and no other powers, and owns the service's database and its
 * objects. Idempotent; run at every start, by every process that opens the embedded database.
 */
export async function ensureServiceRole(setup: RoleSetup): Promise<void> {
  const admin = await superuserClient(setup, 'postgres');
  try {
    const createdb = setup.createDatabases ? 'CREATEDB' : 'NOCREATEDB';
    const attributes = `LOGIN NOSUPERUSER NOCREATEROLE NOREPLICATION NOBYPASSRLS ${createdb}`;
    const password = admin.escapeLiteral(scramVerifier(setup.servicePassword));
    const role = admin.escapeIdentifier(SERVICE_ROLE);
    // duplicate_object: the role exists (or another process has just created it).
    const created = await admin.query(`CREATE ROLE ${role} ${attributes} PASSWORD ${password}`).catch(unless('42710'));
    if (!created) await admin.query(`ALTER ROLE ${role} ${attributes} PASSWORD ${password}`);
    // The test runner drops each file's database WITH (FORCE), which must end an autovacuum worker
    // still in it: that takes pg_signal_backend (it still cannot signal a superuser's process).
    if (setup.createDatabases) await admin.query(`GRANT pg_signal_backend TO ${role}`);
    const database = admin.escapeIdentifier(DATABASE);
    const { rows } = await admin.query('SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1', [
      DATABASE,
    ]);
    if (rows.length === 0) {
      // duplicate_database: another process has just created it.
      await admin.query(`CREATE DATABASE ${database} OWNER ${role}`).catch(unless('42P04'));
    } else if (rows[0].owner !== SERVICE_ROLE) {
      // A database of an earlier version, owned by the superuser: its objects first, in one transaction.
      const db = await superuserClient(setup, DATABASE);
      try {
        await db.query(TRANSFER_OWNERSHIP.replaceAll(':role', db.escapeLiteral(SERVICE_ROLE)));
      } finally {
        await db.end();
      }
      await admin.query(`ALTER DATABASE ${database} OWNER TO ${role}`);
    }
  } finally {
    await admin.end();
  }
}

/** A superuser connection; on a data folder of an earlier version it first replaces the legacy password. */
async function superuserClient(setup: RoleSetup, database: string): Promise<pg.Client> {
  const generated = roleUrl(setup.port, SUPERUSER, setup.superuserPassword, database);
  const client = await connect(generated).catch(unless('28P01'));
  if (client) return client;
  const legacy = await connect(roleUrl(setup.port, SUPERUSER, LEGACY_PASSWORD, database)).catch(unless('28P01'));
  if (legacy) {
    try {
      const secret = legacy.escapeLiteral(scramVerifier(setup.superuserPassword));
      await legacy.query(`ALTER ROLE ${SUPERUSER} PASSWORD ${secret}`);
    } catch (err) {
      await legacy.end();
      throw err;
    }
    return legacy;
  }
  // Another process starting at the same moment may have replaced the legacy password just now.
  const again = await connect(generated).catch(unless('28P01'));
  if (again) return again;
  throw new Error(
    'The embedded database refused the superuser password kept in the data folder (pg-superuser.password). ' +
      'Restore that file, or start with an empty LEADINTAKE_DATA_DIR.',
  );
}

/** A rejection handler that turns the error with this SQLSTATE into null and rethrows any other. */
function unless(code: string): (err: { code?: string }) => null {
  return (err) => {
    if (err.code !== code) throw err;
    return null;
  };
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'leadintake-setup' });
  client.on('error', () => {}); // a server stopping under us; the query in flight rejects
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => {});
    throw err;
  }
  return client;
}

/**
 * A SCRAM-SHA-256 secret (RFC 5803, PostgreSQL's stored form) for a password. Sent instead of the
 * password itself, so no statement carries a password the server could log.
 */
function scramVerifier(password: string, iterations = 4096): string {
  const salt = crypto.randomBytes(16);
  const salted = crypto.pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const hmac = (key: Buffer, text: string) => crypto.createHmac('sha256', key).update(text).digest();
  const storedKey = crypto.createHash('sha256').update(hmac(salted, 'Client Key')).digest();
  const serverKey = hmac(salted, 'Server Key');
  const b64 = (b: Buffer) => b.toString('base64');
  return `SCRAM-SHA-256$${iterations}:${b64(salt)}$${b64(storedKey)}:${b64(serverKey)}`;
}

// The superuser's objects in the service's database, given to the service's role. REASSIGN OWNED
// cannot take objects from the bootstrap superuser, so each kind is altered in turn. Indexes,
// triggers and the sequences of serial and identity columns follow their table; the members of
// an extension (pg_trgm) stay with it.
const TRANSFER_OWNERSHIP = `
DO $$
DECLARE
  target text := :role;
  r record;
BEGIN
  FOR r IN
    SELECT n.oid, n.nspname FROM pg_namespace n
     WHERE n.nspowner = 10 AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'public')
       AND n.nspname NOT LIKE 'pg\\_%'
  LOOP
    EXECUTE format('ALTER SCHEMA %I OWNER TO %I', r.nspname, target);
  END LOOP;
  FOR r IN
    SELECT c.oid, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relowner = 10 AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S', 'c')
       AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
       AND NOT EXISTS (SELECT 1 FROM pg_depend d
                        WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                          AND (d.deptype = 'e' OR (c.relkind = 'S' AND d.deptype IN ('a', 'i'))))
     ORDER BY c.relkind = 'S'
  LOOP
    EXECUTE format('ALTER %s %s OWNER TO %I',
      CASE r.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE'
                     WHEN 'S' THEN 'SEQUENCE' WHEN 'c' THEN 'TYPE' ELSE 'TABLE' END,
      CASE r.relkind WHEN 'c' THEN (SELECT t.oid::regtype::text FROM pg_type t WHERE t.typrelid = r.oid)
                     ELSE r.oid::regclass::text END,
      target);
  END LOOP;
  FOR r IN
    SELECT p.oid FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE p.proowner = 10 AND n.nspname NOT IN ('pg_catalog', 'information_schema')
       AND n.nspname NOT LIKE 'pg\\_%'
       AND NOT EXISTS (SELECT 1 FROM pg_depend d
                        WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
  LOOP
    EXECUTE format('ALTER ROUTINE %s OWNER TO %I', r.oid::regprocedure, target);
  END LOOP;
  FOR r IN
    SELECT t.oid, t.typtype FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE t.typowner = 10 AND t.typtype IN ('e', 'd', 'r') AND t.typelem = 0
       AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
       AND NOT EXISTS (SELECT 1 FROM pg_depend d
                        WHERE d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e')
  LOOP
    EXECUTE format('ALTER %s %s OWNER TO %I',
      CASE r.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END, r.oid::regtype, target);
  END LOOP;
END
$$`;
