// The closed vocabulary of failures the service reports. Services throw AppError with one of
// these codes; src/http/error-handler.ts is the only place that turns them into HTTP.
export type ErrorCode =
  | 'invalid_json'
  | 'validation_failed'
  | 'consent_required'
  | 'missing_authorization'
  | 'bad_scheme'
  | 'invalid_key'
  | 'secret_key_in_browser'
  | 'publishable_key_read'
  | 'origin_not_allowed'
  | 'workspace_not_found'
  | 'lead_not_found'
  | 'route_not_found'
  | 'bad_request'
  | 'headers_too_large'
  | 'request_timeout'
  | 'service_busy'
  | 'duplicate_phone'
  | 'rate_limited'
  | 'body_too_large'
  | 'unsupported_media_type'
  | 'voice_dispatch_failed'
  | 'webhook_signature_invalid'
  | 'webhook_body_too_large'
  | 'not_signed_in'
  | 'sign_in_failed'
  | 'sign_in_throttled'
  | 'too_many_streams'
  | 'csrf_failed'
  | 'forbidden'
  | 'lead_status_conflict'
  | 'lead_taken'
  | 'webhook_endpoint_not_found'
  | 'api_key_not_found'
  | 'lead_source_not_found'
  | 'member_not_found'
  | 'last_owner'
  | 'already_member'
  | 'invite_not_found'
  | 'invite_account_exists'
  | 'invite_other_account'
  | 'dead_letter_not_found'
  | 'note_not_found'
  | 'settings_conflict'
  | 'limit_reached'
  | 'contact_plan_conflict'
  | 'internal';

export interface ValidationIssue {
  path: string[];
  message: string;
}

export interface ErrorDetails {
  message?: string;
  issues?: ValidationIssue[];
  leadId?: string;
  retryAfterSeconds?: number;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, details: ErrorDetails = {}) {
    super(details.message ?? code);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
}
