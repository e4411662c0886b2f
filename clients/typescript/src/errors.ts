/** One field that failed validation (400 `Validation failed.`). */
export interface ValidationIssue {
  path: string[];
  message: string;
}

/**
 * An answer of the API other than success, or a failure to get one (`status` 0: network error
 * or timeout). `error` is the API's machine-readable value (`duplicate_phone`,
 * `Validation failed.`, …): switch on it.
 */
export class LeadIntakeError extends Error {
  readonly status: number;
  readonly error: string;
  readonly issues: ValidationIssue[] | undefined;
  /** The service's `x-request-id`: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** 409 `duplicate_phone`: the existing lead. */
  readonly leadId: string | undefined;
  /** 429 (and 503): seconds the service asked to wait. */
  readonly retryAfterSeconds: number | undefined;

  constructor(init: {
    status: number;
    error: string;
    message?: string | undefined;
    issues?: ValidationIssue[] | undefined;
    requestId?: string | undefined;
    leadId?: string | undefined;
    retryAfterSeconds?: number | undefined;
    cause?: unknown;
  }) {
    super(init.message ?? init.error, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'LeadIntakeError';
    this.status = init.status;
    this.error = init.error;
    this.issues = init.issues;
    this.requestId = init.requestId;
    this.leadId = init.leadId;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** Builds the error of a non-2xx answer from its body and headers. */
export async function errorFromResponse(res: Response): Promise<LeadIntakeError> {
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's error page): keep the status, report the text.
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const retryAfter = Number(res.headers.get('retry-after'));
  return new LeadIntakeError({
    status: res.status,
    error: str(body.error) ?? `HTTP ${res.status}`,
    message: str(body.message) ?? str(body.error) ?? text.slice(0, 200),
    issues: Array.isArray(body.issues) ? (body.issues as ValidationIssue[]) : undefined,
    requestId: res.headers.get('x-request-id') ?? undefined,
    leadId: str(body.leadId),
    retryAfterSeconds: res.headers.has('retry-after') && Number.isFinite(retryAfter) ? retryAfter : undefined,
  });
}
