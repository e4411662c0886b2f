import { pino, type Logger } from 'pino';

export type { Logger };

// Personal data and secrets must never reach the logs. Fields that can hold them are
// censored by path; free text (error messages from providers or PostgreSQL) goes through
// scrubText before it is logged.
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-vapi-secret"]',
  'req.headers["x-twilio-signature"]',
  'req.headers["x-hub-signature-256"]',
  'req.headers["x-cal-signature-256"]',
  'req.headers.cookie',
  // At the top level and up to two objects (or arrays) down: `lead.phone`, `job.data.email`.
  ...['phone', 'email', 'apiKey', 'key', 'token', 'accessToken', 'authToken', 'secret', 'password'].flatMap((field) => [
    field,
    `*.${field}`,
    `*.*.${field}`,
  ]),
  'err.detail',
  'err.where',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError },
    },
    // Buffered and asynchronous by default: a write(2) per line was a tenth of a request's CPU
    // under load (docs/PERFORMANCE.md, "Design choices that stay"). Lines go out in writes of at least 4 KiB, or at the
    // latest 100 ms after they were logged, and pino flushes what is buffered when the process
    // exits; only a SIGKILL loses the last 100 ms of lines.
    destination ?? pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 }),
  );
}

/**
 * The logger of the one line per HTTP request: same destination, level and format as `log`, but
 * without the redaction pass, which was half of that line's cost under load. Only for lines whose
 * fields are fixed and can hold no personal data (request id, method, route template, status,
 * duration); everything else goes through `log`.
 */
export function createAccessLogger(log: Logger): Logger {
  const destination = (log as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym]!;
  return pino({ level: log.level }, destination);
}

const PHONE_LIKE = /\+?\d[\d\s().-]{5,}\d/g;
// `[` and `]` cannot be in an address's local part unquoted: `postgres://[redacted]@db.example.com` stays.
const EMAIL_LIKE = /[^\s@"'<>(),;:[\]]+@[^\s@"'<>(),;:]+\.[^\s@"'<>(),;:]+/g;
// The prefix stays, so the line still says what kind of credential it was.
const KEY_LIKE = /\b(li_live_|li_test_|sk-|cal_live_|whsec_|Bearer\s+)[A-Za-z0-9_\-.]+/g;
// Meta (WhatsApp Cloud API) access tokens: `EAA` and a long run of base62.
const META_TOKEN_LIKE = /\b(EAA)[A-Za-z0-9]{20,}/g;
// Credentials in a URL (`postgres://user:password@host/db`): the whole user-info part.
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]+@/gi;

/** Masks phone numbers, e-mail addresses, API keys, tokens and URL credentials inside free text. */
export function scrubText(text: string): string {
  return text
    .replace(URL_CREDENTIALS, '$1[redacted]@')
    .replace(KEY_LIKE, '$1[redacted]')
    .replace(META_TOKEN_LIKE, '$1[redacted]')
    .replace(EMAIL_LIKE, '[email]')
    .replace(PHONE_LIKE, '[phone]');
}

function serializeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: scrubText(String(err)) };
  const out: Record<string, unknown> = { type: err.name, message: scrubText(err.message) };
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') out.code = code;
  if (err.stack) out.stack = scrubText(err.stack);
  return out;
}
