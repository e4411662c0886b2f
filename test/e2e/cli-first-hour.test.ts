import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { installJobQueues } from '../../src/jobs/boss.ts';
import { AGENT_TURN_DEAD_LETTER, AGENT_TURN_QUEUE, WEBHOOK_DELIVERY_QUEUE } from '../../src/jobs/queues.ts';
import { CliError, parseCommandArgs } from '../../src/cli/args.ts';
import { adminUrl } from '../helpers/test-db.ts';
import { runCli } from '../helpers/worker-process.ts';

// A new user's first commands: on a database no `serve` has touched, `jobs dead`
// works because `migrate` (which every command runs first) creates the job queues; and a
// mistyped option gets one line naming the command and the options it takes.

let admin: Pool;
const databases: string[] = [];

before(() => {
  admin = createPool(adminUrl(), 1);
});
after(async () => {
  for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

/** A database that has never been migrated, and the environment of a CLI on it. */
async function emptyDatabase(): Promise<{ url: string; env: Record<string, string> }> {
  const name = `leadintake_fresh_${crypto.randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  databases.push(name);
  const u = new URL(adminUrl());
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    env: { DATABASE_URL: u.toString(), LEADINTAKE_ENCRYPTION_KEY: '22'.repeat(32), LOG_LEVEL: 'warn' },
  };
}

async function queuesOf(url: string): Promise<string[]> {
  const pool = createPool(url, 1);
  try {
    const { rows } = await pool.query(`SELECT name FROM pgboss.queue WHERE name = ANY($1) ORDER BY name`, [
      [AGENT_TURN_QUEUE, AGENT_TURN_DEAD_LETTER],
    ]);
    return rows.map((r) => r.name);
  } finally {
    await pool.end();
  }
}

describe('a database where serve never ran', () => {
  it('jobs dead --json answers [] and the queues exist afterwards', async () => {
    const db = await emptyDatabase();
    const r = await runCli(['jobs', 'dead', '--json'], db.env);
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    assert.equal(r.stdout, '[]\n');
    assert.deepEqual(await queuesOf(db.url), [AGENT_TURN_QUEUE, AGENT_TURN_DEAD_LETTER].sort());
  });

  it('migrate creates the queues, with the retry policy a start gives them', async () => {
    const db = await emptyDatabase();
    const r = await runCli(['migrate'], db.env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'Migrations are up to date.\n');
    const pool = createPool(db.url, 1);
    try {
      const { rows } = await pool.query(
        `SELECT name, retry_limit, dead_letter, heartbeat_seconds FROM pgboss.queue ORDER BY name`,
      );
      assert.deepEqual(
        rows.find((q) => q.name === AGENT_TURN_QUEUE),
        { name: AGENT_TURN_QUEUE, retry_limit: 5, dead_letter: AGENT_TURN_DEAD_LETTER, heartbeat_seconds: 15 },
      );
      assert.ok(rows.some((q) => q.name === AGENT_TURN_DEAD_LETTER));
      assert.ok(rows.some((q) => q.name === WEBHOOK_DELIVERY_QUEUE));
      // A later command (every one runs this) leaves a policy a running server set alone (JOB_HEARTBEAT_SECONDS).
      await pool.query(`UPDATE pgboss.queue SET heartbeat_seconds = 10 WHERE name = $1`, [AGENT_TURN_QUEUE]);
      await installJobQueues(db.url);
      const [q] = (await pool.query(`SELECT heartbeat_seconds FROM pgboss.queue WHERE name = $1`, [AGENT_TURN_QUEUE]))
        .rows;
      assert.equal(q.heartbeat_seconds, 10);
      // An installation from before outbound webhooks: the next command creates their queue.
      await pool.query(`DELETE FROM pgboss.queue WHERE name = $1`, [WEBHOOK_DELIVERY_QUEUE]);
      assert.equal((await runCli(['migrate'], db.env)).code, 0);
      assert.equal(
        (await pool.query(`SELECT count(*)::int AS n FROM pgboss.queue WHERE name = $1`, [WEBHOOK_DELIVERY_QUEUE]))
          .rows[0].n,
        1,
      );
    } finally {
      await pool.end();
    }
  });
});

describe('option mistakes', () => {
  // Through the real command line: the issue's own case, and subcommands whose option lists live
  // in their command modules (parsed after the database is opened, so a real one is needed).
  let env: Record<string, string>;
  before(async () => {
    env = (await emptyDatabase()).env;
  });
  const cases: Array<[string[], string]> = [
    [['serve', '--prot', '3001'], 'Unknown option --prot for "serve". Options: --port, --host, --no-worker.'],
    [
      ['workspace', 'create', '--slg', 'x'],
      'Unknown option --slg for "workspace create". Options: --slug, --name, --channel, --config, --json.',
    ],
    [['key', 'revoke', 'abc', '--json'], 'Unknown option --json for "key revoke". It takes no options.'],
    [['lead', 'delete', 'abc', '--json'], 'Unknown option --json for "lead delete". It takes no options.'],
  ];
  it('one line naming the command and its options, exit 1', async () => {
    const runs = await Promise.all(cases.map(([args]) => runCli(args, env)));
    for (const [i, r] of runs.entries()) {
      assert.deepEqual([r.code, r.stdout, r.stderr], [1, '', `leadintake: ${cases[i]![1]}\n`], cases[i]![0].join(' '));
    }
  });

  it('every kind of mistake, by the parser every command uses', () => {
    const serve = { port: 'string', host: 'string', 'no-worker': 'boolean' } as const;
    const refused = (
      args: string[],
      spec: Record<string, 'string' | 'boolean'>,
      command: string,
      accepted?: string[],
    ) => {
      try {
        parseCommandArgs(args, spec, command, accepted);
      } catch (err) {
        assert.ok(err instanceof CliError);
        return err.message;
      }
      assert.fail(`${command} ${args.join(' ')} was accepted`);
    };
    assert.equal(refused(['--port'], serve, 'serve'), 'Option --port of "serve" needs a value.');
    assert.equal(refused(['--no-worker=yes'], serve, 'serve'), 'Option --no-worker of "serve" takes no value.');
    assert.equal(
      refused(['--concurrency', '4'], {}, 'worker'),
      'Unknown option --concurrency for "worker". It takes no options.',
    );
    assert.equal(refused(['-f'], {}, 'migrate'), 'Unknown option -f for "migrate". It takes no options.');
    assert.equal(
      refused(['--all'], { json: 'boolean', all: 'boolean' }, 'jobs dead', ['json']),
      'Unknown option --all for "jobs dead". Options: --json.',
    );
    assert.deepEqual(
      { ...parseCommandArgs(['--port', '3001', '--no-worker'], serve, 'serve').values },
      { port: '3001', 'no-worker': true },
    );
    const jobs = parseCommandArgs(['acme', '--json'], { json: 'boolean', all: 'boolean' }, 'jobs dead', ['json']);
    assert.deepEqual([{ ...jobs.values }, jobs.positionals], [{ json: true }, ['acme']]);
  });
});
