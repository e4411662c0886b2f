import fs from 'node:fs';
import { z } from 'zod';
import { trustProxySchema } from './trust-proxy.ts';

// Every environment variable the service reads, in one schema that is also the Config type.
// Parsed once at start (loadConfig) and passed down; nothing else reads process.env.
// Whole numbers written in decimal only: `0x10`, `1e3` and blanks are mistakes, not numbers.
const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
const port = wholeNumber(0, 65535);
const positiveInt = wholeNumber(1);
const optionalString = z.string().trim().min(1).optional();

export const configSchema = z
  .object({
    DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' }).optional(),
    /**
     * Set in the container image, which has no embedded PostgreSQL: DATABASE_URL (or
     * DATABASE_URL_FILE) is required.
     */
    LEADINTAKE_REQUIRE_DATABASE_URL: z.stringbool().default(false),
    /**
     * `serve` and `worker` apply the migrations at start (under their advisory lock); false for
     * platforms that run `leadintake migrate` as a job first (/readyz is 503 until the schema is current).
     */
    MIGRATE_ON_START: z.stringbool().default(true),
    LEADINTAKE_DATA_DIR: z.string().min(1).default('./.leadintake'),
    PORT: port.default(3000),
    HOST: z.string().min(1).default('127.0.0.1'),
    PUBLIC_BASE_URL: z.url().optional(),
    LEADINTAKE_ENCRYPTION_KEY: optionalString,
    /**
     * Behind proxies: how many of them (a hop count) or their addresses/CIDR ranges, so the client
     * IP (consent record, sign-in throttle) is taken from X-Forwarded-For only as far as they vouch.
     */
    TRUST_PROXY: trustProxySchema.default(false),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    DB_POOL_MAX: positiveInt.default(20),
    VAPI_BASE_URL: z.url().default('https://api.vapi.ai'),
    VAPI_TIMEOUT_MS: positiveInt.default(10_000),
    /** Cal.com API v2 (self-hosted instances differ). */
    CALCOM_BASE_URL: z.url().default('https://api.cal.com'),
    /** Cloudflare Turnstile's siteverify (the hosted form's optional CAPTCHA; tests use the simulator). */
    TURNSTILE_VERIFY_URL: z.url().default('https://challenges.cloudflare.com/turnstile/v0/siteverify'),
    /** How long a looked-up API key is trusted before it is read again (revocation delay). */
    API_KEY_CACHE_TTL_MS: wholeNumber(0).default(5_000),
    DEFAULT_HOURLY_LIMIT: positiveInt.default(1000),
    /**
     * Per-workspace caps a workspace's own admin cannot pass (docs/SECURITY.md, "Quotas"): the
     * hourly limit a new API key may have (keys made before keep theirs), active API keys, and
     * outbound webhook endpoints. The CLI is held to them too.
     */
    MAX_KEY_HOURLY_LIMIT: positiveInt.default(10_000),
    MAX_API_KEYS_PER_WORKSPACE: wholeNumber(2, 100_000).default(20),
    /**
     * Leads a publishable key's browsers may submit per visitor address and per workspace per hour
     * (docs/INTAKE.md).
     */
    PUBLISHABLE_ADDRESS_HOURLY_LIMIT: positiveInt.default(20),
    PUBLISHABLE_WORKSPACE_HOURLY_LIMIT: positiveInt.default(1000),
    MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE: wholeNumber(1, 100_000).default(10),
    /** Admin API requests per session per minute, counted in each process (0: no limit); then 429. */
    ADMIN_RATE_LIMIT_PER_MINUTE: wholeNumber(0, 1_000_000).default(600),
    /**
     * Agent turns (each sends at most one message) per WhatsApp lead since an operator last handed
     * it back; at the bound the lead goes to a person (`needs_human`) with the reason on its timeline.
     */
    MAX_AGENT_TURNS_PER_LEAD: wholeNumber(2, 100_000).default(40),
    /** Safety-net poll of the outbox relay; the relay is also woken at once after each commit. */
    OUTBOX_POLL_MS: positiveInt.default(1_000),
    /** Vapi waits 20 s for tool results; tools still running after this are answered "still working". */
    VAPI_TOOL_DEADLINE_MS: wholeNumber(100, 19_000).default(15_000),
    /** Integration log (provider traffic, docs/VOICE.md): kept this many days, at most this many rows per workspace. */
    INTEGRATION_LOG_RETENTION_DAYS: wholeNumber(1, 3650).default(14),
    INTEGRATION_LOG_MAX_PER_WORKSPACE: wholeNumber(100).default(20_000),
    /** OpenAI-compatible chat-completions server (up to /v1) for the WhatsApp agent; per workspace `llm` overrides. */
    OPENAI_BASE_URL: z.url().default('https://api.openai.com/v1'),
    OPENAI_API_KEY: optionalString,
    LLM_MODEL: z.string().trim().min(1).default('gpt-4o-mini'),
    LLM_TIMEOUT_MS: positiveInt.default(60_000),
    /**
     * Chat model calls of one workspace a process runs at once (default: half of WORKER_CONCURRENCY,
     * at least 1); failed calls in a row that open the workspace's circuit breaker, and how long it
     * then refuses calls; the longest Retry-After a turn waits before its lead goes to a person.
     */
    LLM_MAX_CONCURRENCY_PER_WORKSPACE: wholeNumber(1, 10_000).optional(),
    LLM_BREAKER_FAILURES: wholeNumber(1, 1000).default(3),
    LLM_BREAKER_COOLDOWN_SECONDS: wholeNumber(1, 86_400).default(30),
    LLM_RETRY_AFTER_MAX_SECONDS: wholeNumber(1, 86_400).default(600),
    /** WhatsApp providers (the demo and tests point them at the simulators). */
    TWILIO_BASE_URL: z.url().default('https://api.twilio.com'),
    /** Meta Graph API including the version. */
    WHATSAPP_GRAPH_BASE_URL: z.url().default('https://graph.facebook.com/v23.0'),
    WHATSAPP_TIMEOUT_MS: positiveInt.default(10_000),
    /** Agent turns one process runs at once (`serve` with its in-process worker, or `worker`). */
    WORKER_CONCURRENCY: positiveInt.default(8),
    /**
     * Jobs each poller takes a fetch; the first contacts among them run together (one lock, read and insert for all).
     */
    WORKER_BATCH_SIZE: positiveInt.default(8),
    /**
     * A running turn proves it is alive this often; a crashed worker's turn is retried after it lapses (pg-boss minimum
     * 10).
     */
    JOB_HEARTBEAT_SECONDS: wholeNumber(10, 3600).default(15),
    /** How often pg-boss looks for lapsed heartbeats (and refreshes queue statistics). */
    JOB_MONITOR_SECONDS: wholeNumber(1, 3600).default(20),
    /**
     * How often an idle worker looks for jobs that no NOTIFY announced: retries whose back-off
     * has passed, jobs created while no worker listened. New jobs wake workers at once anyway.
     */
    JOB_POLL_SECONDS: wholeNumber(1, 300).default(2),
    /** `serve` and `worker` serve GET /metrics on this port (on HOST), never on PORT; unset: no metrics endpoint. */
    METRICS_PORT: port.optional(),
    /** On SIGTERM, running turns get this long to finish; those still running are then failed (retried elsewhere). */
    SHUTDOWN_GRACE_SECONDS: wholeNumber(1, 3600).default(10),
    /** Outbound webhooks (docs/OUTBOUND-WEBHOOKS.md): one attempt's limit, connection to the end of the answer. */
    WEBHOOK_TIMEOUT_MS: wholeNumber(1000, 60_000).default(10_000),
    /**
     * Let URLs a workspace sets (its model server's base URL, its webhook endpoints) reach
     * loopback, private, link-local and CGNAT addresses: a self-hoster whose model server or
     * receiver is on their own network. Off: refused when saved and at every connection.
     * WEBHOOKS_ALLOW_PRIVATE_NETWORKS is its older name.
     */
    EGRESS_ALLOW_PRIVATE_NETWORKS: z.stringbool().optional(),
    WEBHOOKS_ALLOW_PRIVATE_NETWORKS: z.stringbool().optional(),
    /**
     * Load shedding (docs/RELIABILITY.md): public-API requests in flight at most; the next ones wait in a short line.
     */
    MAX_REQUESTS_IN_FLIGHT: positiveInt.default(256),
    /**
     * Public-API requests that may wait for a slot past MAX_REQUESTS_IN_FLIGHT; past this, 503 at once (0: no line).
     */
    MAX_REQUESTS_WAITING: wholeNumber(0, 1_000_000).default(4096),
    /** Longest wait of a request in that line (ms) before it is answered 503. */
    MAX_REQUEST_WAIT_MS: wholeNumber(1, 60_000).default(500),
    /** Public-API requests are also shed while the sampled mean event-loop delay exceeds this (ms); 0 turns it off. */
    MAX_EVENT_LOOP_DELAY_MS: wholeNumber(0, 60_000).default(1000),
    /**
     * For this long after listening (ms), the event-loop delay sheds nothing: its samples still hold the start's own
     * work.
     */
    EVENT_LOOP_GRACE_MS: wholeNumber(0, 600_000).default(5000),
    /** Retry-After (seconds) of the 503 `Service is busy; retry shortly.` */
    BUSY_RETRY_AFTER_SECONDS: wholeNumber(1, 3600).default(1),
    /** Operators' dashboard: a session unused this long ends (sign in again). */
    SESSION_IDLE_MINUTES: wholeNumber(1, 525_600).default(30),
    /** ...and any session ends this long after sign-in, however busy. */
    SESSION_MAX_HOURS: wholeNumber(1, 8760).default(12),
    /** Live-update streams (SSE) one session may hold open in a process; SSE heartbeat and re-check interval. */
    LIVE_STREAMS_PER_SESSION: wholeNumber(1, 1000).default(10),
    LIVE_HEARTBEAT_SECONDS: wholeNumber(1, 300).default(25),
    /** log2 of scrypt's N for new operator passwords (r=8, p=1); older hashes are redone at sign-in. */
    PASSWORD_SCRYPT_LOG2_N: wholeNumber(14, 20).default(17),
    /** Failed sign-ins per account from one client IP, and per client IP, in SIGN_IN_WINDOW_MINUTES; then 429. */
    SIGN_IN_MAX_FAILURES: wholeNumber(1, 1000).default(5),
    SIGN_IN_MAX_FAILURES_PER_IP: wholeNumber(1, 100_000).default(50),
    SIGN_IN_WINDOW_MINUTES: wholeNumber(1, 1440).default(15),
  })
  .refine((c) => c.DATABASE_URL !== undefined || !c.LEADINTAKE_REQUIRE_DATABASE_URL, {
    path: ['DATABASE_URL'],
    error:
      'required (this image has no embedded PostgreSQL): set DATABASE_URL or DATABASE_URL_FILE to a postgres:// URL',
  })
  .transform(({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS, LEADINTAKE_REQUIRE_DATABASE_URL: _required, ...c }) => ({
    ...c,
    EGRESS_ALLOW_PRIVATE_NETWORKS: c.EGRESS_ALLOW_PRIVATE_NETWORKS ?? WEBHOOKS_ALLOW_PRIVATE_NETWORKS ?? false,
    PUBLIC_BASE_URL: (c.PUBLIC_BASE_URL ?? `http://${c.HOST}:${c.PORT}`).replace(/\/+$/, ''),
    VAPI_BASE_URL: c.VAPI_BASE_URL.replace(/\/+$/, ''),
    CALCOM_BASE_URL: c.CALCOM_BASE_URL.replace(/\/+$/, ''),
    OPENAI_BASE_URL: c.OPENAI_BASE_URL.replace(/\/+$/, ''),
    TWILIO_BASE_URL: c.TWILIO_BASE_URL.replace(/\/+$/, ''),
    WHATSAPP_GRAPH_BASE_URL: c.WHATSAPP_GRAPH_BASE_URL.replace(/\/+$/, ''),
  }));

export type Config = z.output<typeof configSchema>;

export class ConfigError extends Error {}

/**
 * The secrets that may also be given as a file (`<NAME>_FILE`: Docker and Kubernetes secrets are
 * mounted as files, which keeps them out of `docker inspect` and the process's environment).
 */
export const SECRET_FILE_VARIABLES = ['DATABASE_URL', 'LEADINTAKE_ENCRYPTION_KEY', 'OPENAI_API_KEY'] as const;

/** Parses the environment; throws ConfigError listing every bad variable in one message. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // A variable set to an empty string (an empty line in a .env file) counts as unset.
  const given = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const fileErrors = readSecretFiles(given);
  const result = configSchema.safeParse(given);
  if (result.success && fileErrors.length === 0) return result.data;
  const lines = [
    ...fileErrors,
    ...(result.error?.issues ?? []).map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`),
  ];
  throw new ConfigError(`Invalid configuration: ${lines.join('; ')}`);
}

/** Replaces each `<NAME>_FILE` in `env` by `<NAME>` with the file's text; returns what went wrong. */
function readSecretFiles(env: Record<string, string | undefined>): string[] {
  const errors: string[] = [];
  for (const name of SECRET_FILE_VARIABLES) {
    const file = env[`${name}_FILE`];
    if (file === undefined) continue;
    delete env[`${name}_FILE`];
    if (env[name] !== undefined) {
      errors.push(`${name}_FILE: set together with ${name}; set only one of them`);
      continue;
    }
    let text: string;
    try {
      // The editor's or `echo`'s final newline is not part of the secret.
      text = fs.readFileSync(file, 'utf8').replace(/[\r\n]+$/, '');
    } catch (err) {
      // The path is the operator's, never the secret: safe to name.
      errors.push(`${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      continue;
    }
    if (text.trim() === '') errors.push(`${name}_FILE: ${file} is empty`);
    else env[name] = text;
  }
  return errors;
}
