export { isOutcome, LeadIntakeClient, MIN_POLL_INTERVAL_MS } from './client.ts';
export type {
  CallOptions,
  ClientOptions,
  Lead,
  LeadAccepted,
  LeadResponse,
  LeadStatus,
  LeadSubmission,
  RetryPolicy,
  SubmitResult,
  VoiceCall,
  WaitOptions,
} from './client.ts';
export { LeadIntakeError } from './errors.ts';
export type { ValidationIssue } from './errors.ts';
export type { components, operations, paths } from './schema.ts';
