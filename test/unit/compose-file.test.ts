import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';

// compose.yaml is the documented production start (docs/DEPLOY.md). Docker Compose itself is not
// on every build machine, so the file is parsed here and held to what the guide promises;
// `docker compose config` runs as well where the docker CLI has the compose plugin.

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  profiles?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition?: string }> | string[];
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test?: string[]; disable?: boolean };
  container_name?: string;
  mem_limit?: string;
}

const text = fs.readFileSync('compose.yaml', 'utf8');
const compose = parse(text) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const { postgres, leadintake, worker, proxy } = compose.services;

const dependsOnHealthyPostgres = (s: Service) =>
  !Array.isArray(s.depends_on) && s.depends_on?.postgres?.condition === 'service_healthy';

/** A `${NAME:?message}` guard: compose refuses to start while NAME is unset or empty. */
const guarded = (value: string | undefined, name: string) => new RegExp(`\\$\\{${name}:\\?[^}]+\\}`).test(value ?? '');

describe('compose.yaml', () => {
  it('has PostgreSQL of a current major on a named volume, checked by pg_isready', () => {
    assert.ok(postgres && leadintake && worker && proxy);
    const major = Number(/^postgres:(\d+)/.exec(postgres.image ?? '')?.[1]);
    assert.ok(major >= 16, postgres.image);
    const dataVolume = postgres.volumes?.find((v) => v.endsWith(':/var/lib/postgresql'));
    assert.ok(dataVolume, 'data volume');
    assert.ok(dataVolume.split(':')[0]! in compose.volumes, 'a named volume, declared');
    assert.ok(postgres.healthcheck?.test?.includes('pg_isready'));
    assert.ok(guarded(postgres.environment?.POSTGRES_PASSWORD, 'POSTGRES_PASSWORD'));
  });

  it("creates the service's own role from an init script that exists and is executable", () => {
    const mount = postgres!.volumes?.find((v) => v.includes('/docker-entrypoint-initdb.d/'));
    const script = mount?.split(':')[0] ?? '';
    assert.ok(fs.statSync(script).mode & 0o111, `${script} executable`);
    assert.match(fs.readFileSync(script, 'utf8'), /CREATE ROLE leadintake LOGIN NOSUPERUSER/);
    assert.ok(guarded(postgres!.environment?.LEADINTAKE_DB_PASSWORD, 'LEADINTAKE_DB_PASSWORD'));
  });

  it('runs serve --no-worker from the built image once PostgreSQL is healthy, with the secrets guarded', () => {
    const s = leadintake!;
    assert.equal(s.build, '.');
    assert.ok(s.image);
    assert.deepEqual(s.command, ['serve', '--no-worker']);
    assert.ok(dependsOnHealthyPostgres(s));
    assert.ok(guarded(s.environment?.LEADINTAKE_ENCRYPTION_KEY, 'LEADINTAKE_ENCRYPTION_KEY'));
    assert.ok(guarded(s.environment?.DATABASE_URL, 'LEADINTAKE_DB_PASSWORD'));
    assert.match(s.environment?.DATABASE_URL ?? '', /^postgres:\/\/leadintake:.*@postgres:5432\/leadintake$/);
    assert.equal(s.environment?.HOST, '0.0.0.0');
    // The superuser's password is in .env (env_file) but never in the service's environment.
    assert.equal(s.environment?.POSTGRES_PASSWORD, '');
  });

  it('calls itself back where serve and worker both reach it, unless .env says otherwise', () => {
    // The sandbox's simulated providers run in the worker and call PUBLIC_BASE_URL: 0.0.0.0 (the
    // default from HOST) reaches nothing there, so sandbox leads stalled after their first message.
    for (const s of [leadintake!, worker!]) {
      const m = /^\$\{PUBLIC_BASE_URL:-(http:\/\/([^:/]+):(\d+))\}$/.exec(s.environment?.PUBLIC_BASE_URL ?? '');
      assert.ok(m, s.environment?.PUBLIC_BASE_URL);
      assert.ok(m[2]! in compose.services && compose.services[m[2]!]?.command?.includes('serve'), m[1]);
      assert.equal(m[3], s.environment?.PORT);
    }
  });

  it('never publishes the metrics port', () => {
    const metricsPort = leadintake!.environment?.METRICS_PORT;
    assert.ok(metricsPort);
    for (const s of Object.values(compose.services)) {
      for (const p of s.ports ?? []) assert.ok(!p.endsWith(`:${metricsPort}`), p);
    }
  });

  it('has a worker that scales: same image and settings, no fixed name, no host port, no HTTP health check', () => {
    const w = worker!;
    assert.deepEqual(w.command, ['worker']);
    assert.equal(w.image, leadintake!.image);
    assert.deepEqual(w.environment, leadintake!.environment);
    assert.ok(dependsOnHealthyPostgres(w));
    assert.equal(w.container_name, undefined);
    assert.equal(w.ports, undefined);
    assert.equal(w.healthcheck?.disable, true);
    assert.equal(leadintake!.container_name, undefined);
  });

  it('gives the service processes a memory limit, from which Node sizes its heap', () => {
    for (const s of [leadintake!, worker!]) assert.match(s.mem_limit ?? '', /^\d+[mg]$/);
  });

  it('has Caddy in an optional proxy profile, in front of leadintake', () => {
    const p = proxy!;
    assert.deepEqual(p.profiles, ['proxy']);
    assert.match(p.image ?? '', /^caddy:/);
    assert.ok(p.ports?.includes('443:443'));
    const caddyfile = p.volumes?.find((v) => v.endsWith(':/etc/caddy/Caddyfile:ro'))?.split(':')[0] ?? '';
    const config = fs.readFileSync(caddyfile, 'utf8');
    assert.match(config, /^\{\$LEADINTAKE_DOMAIN\} \{/m);
    assert.match(config, /reverse_proxy leadintake:3000/);
    for (const [name, s] of Object.entries(compose.services)) {
      if (name !== 'proxy') assert.equal(s.profiles, undefined, `${name} starts without a profile`);
    }
  });

  const docker = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
  it('passes `docker compose config`', { skip: docker.status !== 0 && 'no docker compose here' }, () => {
    const env = {
      ...process.env,
      LEADINTAKE_ENCRYPTION_KEY: 'a'.repeat(64),
      POSTGRES_PASSWORD: 'p',
      LEADINTAKE_DB_PASSWORD: 'q',
    };
    for (const args of [
      ['config', '-q'],
      ['--profile', 'proxy', 'config', '-q'],
    ]) {
      const run = spawnSync('docker', ['compose', '-f', 'compose.yaml', ...args], { env, encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
    }
    const unset = { ...env, LEADINTAKE_ENCRYPTION_KEY: '' };
    const refused = spawnSync('docker', ['compose', '-f', 'compose.yaml', 'config', '-q'], {
      env: unset,
      encoding: 'utf8',
    });
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, /LEADINTAKE_ENCRYPTION_KEY/);
  });
});
