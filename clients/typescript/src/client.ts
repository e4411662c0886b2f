import { errorFromResponse, LeadIntakeError } from './errors.ts';
import type { components } from './schema.ts';

export type LeadSubmission = components['schemas']['LeadSubmission'];
export type Lead = components['schemas']['Lead'];
export type LeadStatus = components['schemas']['LeadStatus'];
export type VoiceCall = components['schemas']['VoiceCall'];
export type LeadResponse = components['schemas']['LeadResponse'];
export type LeadAccepted = components['schemas']['VoiceLeadAccepted'] | components['schemas']['WhatsappLeadAccepted'];

/**
 * `accepted` is the 201 body; it is null when an earlier attempt whose answer was lost had
 * created the lead (the retry got 409 `duplicate_phone` with the existing lead's id).
 */
export interface SubmitResult {
  leadId: string;
  accepted: LeadAccepted | null;
}

export interface RetryPolicy {
  /** Retries of 502 `voice_dispatch_failed` (the API asks for once or twice). Default 2. */
  badGatewayRetries: number;
  /** Retries of other 5xx answers and of network errors and timeouts. Default 4. */
  serverErrorRetries: number;
  /** Retries after 429, each after the Retry-After the service gave. Default 3. */
  rateLimitRetries: number;
  /** A 429 asking to wait longer than this is thrown instead of waited for. Default 60 000 ms. */
  maxRetryAfterMs: number;
  /** First backoff; doubled per retry, then jittered (half fixed, half random). Default 1000 ms. */
  baseDelayMs: number;
  /** Upper bound of one backoff. Default 30 000 ms. */
  maxDelayMs: number;
}

export interface ClientOptions {
  /** Where the service is, e.g. `https://leads.example.com`. */
  baseUrl: string;
  apiKey: string;
  retry?: Partial<RetryPolicy>;
  /** Per request. Default 30 000 ms. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Waits between attempts and polls; injectable for tests. Must reject when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** In [0, 1); for jitter. Default Math.random. */
  random?: () => number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface WaitOptions extends CallOptions {
  /** Poll interval bounds; default 10–30 s, as the API asks. Never below 5 s, whatever is asked. */
  intervalMs?: { min: number; max: number };
  /** Called with each answer that is not yet an outcome. */
  onPoll?: (read: LeadResponse) => void;
}

const DEFAULT_RETRY: RetryPolicy = {
  badGatewayRetries: 2,
  serverErrorRetries: 4,
  rateLimitRetries: 3,
  maxRetryAfterMs: 60_000,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
};
/** The API's rate limit is hourly per key: polling faster than this only spends the quota. */
export const MIN_POLL_INTERVAL_MS = 5_000;
const FINAL_STATUSES: ReadonlySet<LeadStatus> = new Set(['booked', 'unqualified', 'needs_human']);

/** Whether a read is an outcome: a final status, or a voice call that has ended. */
export function isOutcome(read: LeadResponse): boolean {
  return FINAL_STATUSES.has(read.lead.status) || read.voiceCall?.status === 'ended';
}

export class LeadIntakeClient {
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #retry: RetryPolicy;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;

  constructor(opts: ClientOptions) {
    this.#baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.#apiKey = opts.apiKey;
    this.#retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
    this.#fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.#sleep = opts.sleep ?? sleep;
    this.#random = opts.random ?? Math.random;
  }

  /**
   * POST /api/public/leads with the API's client rules: 400s are thrown at once; 429
   * waits Retry-After and retries; 502 is retried twice, other 5xx and network failures with
   * exponential backoff and jitter. A 409 after an attempt whose outcome is unknown (network
   * failure, 500) means that attempt created the lead: its id is returned.
   */
  async submitLead(body: LeadSubmission, opts: CallOptions = {}): Promise<SubmitResult> {
    const used = { badGateway: 0, server: 0, rateLimit: 0 };
    let outcomeUnknown = false;
    for (;;) {
      const answer = await this.#send('POST', '/api/public/leads', body, opts.signal).then(
        async (res) => (res.ok ? ((await res.json()) as LeadAccepted) : await errorFromResponse(res)),
        (err: unknown) => networkError(err, opts.signal),
      );
      if (!(answer instanceof LeadIntakeError)) return { leadId: answer.leadId, accepted: answer };
      const error = answer;
      if (error.status === 409 && error.error === 'duplicate_phone' && outcomeUnknown && error.leadId)
        return { leadId: error.leadId, accepted: null };
      const delay = this.#retryDelay(error, used);
      if (delay === null) throw error;
      // 502 (the lead was rolled back), 429 and 503 (not processed) leave nothing behind.
      if (error.status === 0 || (error.status >= 500 && error.status !== 502 && error.status !== 503))
        outcomeUnknown = true;
      await this.#sleep(delay, opts.signal);
    }
  }

  /** GET /api/public/leads/{id}: the lead and, in a voice workspace, its latest call. */
  async getLead(id: string, opts: CallOptions = {}): Promise<LeadResponse> {
    const res = await this.#send('GET', `/api/public/leads/${encodeURIComponent(id)}`, undefined, opts.signal).catch(
      (err: unknown) => {
        throw networkError(err, opts.signal);
      },
    );
    if (!res.ok) throw await errorFromResponse(res);
    return (await res.json()) as LeadResponse;
  }

  /**
   * Polls the lead until it is booked, unqualified or needs a human, or its voice call
   * has ended, and returns that read. Every 10–30 s with jitter, never more often than every 5 s;
   * a 429 waits its Retry-After, 5xx and network failures are polled through. Abort with `signal`.
   */
  async waitForOutcome(id: string, opts: WaitOptions = {}): Promise<LeadResponse> {
    const min = Math.max(MIN_POLL_INTERVAL_MS, opts.intervalMs?.min ?? 10_000);
    const max = Math.max(min, opts.intervalMs?.max ?? 30_000);
    for (;;) {
      let delay = min + this.#random() * (max - min);
      try {
        const read = await this.getLead(id, opts);
        if (isOutcome(read)) return read;
        opts.onPoll?.(read);
      } catch (err) {
        if (!(err instanceof LeadIntakeError)) throw err;
        if (err.status === 429) delay = Math.max(delay, (err.retryAfterSeconds ?? 0) * 1000);
        else if (err.status !== 0 && err.status < 500) throw err;
      }
      await this.#sleep(delay, opts.signal);
    }
  }

  #send(method: string, path: string, body: unknown, signal: AbortSignal | undefined): Promise<Response> {
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    return this.#fetch(`${this.#baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.#apiKey}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  }

  /** How long to wait before retrying after `error`, or null when it must not be retried. */
  #retryDelay(error: LeadIntakeError, used: { badGateway: number; server: number; rateLimit: number }): number | null {
    const r = this.#retry;
    if (error.status === 429) {
      const ms = (error.retryAfterSeconds ?? 1) * 1000;
      if (used.rateLimit++ >= r.rateLimitRetries || ms > r.maxRetryAfterMs) return null;
      return ms;
    }
    if (error.status === 502) return used.badGateway < r.badGatewayRetries ? this.#backoff(used.badGateway++) : null;
    if (error.status === 0 || error.status >= 500) {
      if (used.server >= r.serverErrorRetries) return null;
      const backoff = this.#backoff(used.server++);
      return error.retryAfterSeconds !== undefined ? Math.max(backoff, error.retryAfterSeconds * 1000) : backoff;
    }
    return null;
  }

  #backoff(retryIndex: number): number {
    const full = Math.min(this.#retry.maxDelayMs, this.#retry.baseDelayMs * 2 ** retryIndex);
    return full / 2 + this.#random() * (full / 2);
  }
}

function networkError(err: unknown, signal: AbortSignal | undefined): LeadIntakeError {
  if (signal?.aborted) throw signal.reason;
  const timedOut = err instanceof DOMException && err.name === 'TimeoutError';
  return new LeadIntakeError({
    status: 0,
    error: timedOut ? 'timeout' : 'network_error',
    message: err instanceof Error ? err.message : String(err),
    cause: err,
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
