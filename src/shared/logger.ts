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
  ...['phone', 'email', 'apiKey', 'key', 'token', 'authToken', 'secret'].flatMap((field) => [field, `*.${field}`]),
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
const EMAIL_LIKE = /[^\s@"'<>(),;:]+@[^\s@"'<>(),;:]+\.[^\s@"'<>(),;:]+/g;
const KEY_LIKE = /\b(li_live_|li_test_|sk-|cal_live_|Bearer\s+)[A-Za-z0-9_\-.]+/g;

/** Masks phone numbers, e-mail addresses and API keys inside free text. */
export function scrubText(text: string): string {
  return text.replace(KEY_LIKE, '$1[redacted]').replace(EMAIL_LIKE, '[email]').replace(PHONE_LIKE, '[phone]');
}

function serializeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: scrubText(String(err)) };
  const out: Record<string, unknown> = { type: err.name, message: scrubText(err.message) };
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') out.code = code;
  if (err.stack) out.stack = scrubText(err.stack);
  return out;
}
