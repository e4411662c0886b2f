import type { SendFailureKind } from '../messaging-provider.ts';

// Twilio error codes we act on (Twilio's Messages API docs, twilio.com/docs/api/errors/<code>). The same
// codes arrive two ways: synchronously in a REST error body, and asynchronously as `ErrorCode`
// in a status callback (MessageStatus=failed|undelivered), so one classifier serves both.

/** Outside the 24-hour customer-service window: only a template (ContentSid) may be sent. */
export const TWILIO_WINDOW_CLOSED = 63016;
/** Twilio's ErrorMessage for 63016 (twilio.com/docs/api/errors/63016). */
export const TWILIO_WINDOW_CLOSED_MESSAGE =
  'Failed to send freeform message because you are outside the allowed window. ' +
  'If you are using WhatsApp, please use a Message Template.';

/** Twilio's REST error body, e.g. `{"code":20003,"message":"Authenticate","more_info":"…/20003","status":401}`. */
export interface TwilioErrorBody {
  code: number;
  message: string;
  more_info: string;
  status: number;
}

export function twilioErrorBody(status: number, code: number, message: string): TwilioErrorBody {
  return { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status };
}

const WINDOW = new Set([TWILIO_WINDOW_CLOSED]);

// The operator must fix something in the workspace's Twilio settings or in Twilio itself.
const CONFIGURATION = new Set([
  20003, // authenticate: wrong account SID or auth token
  20005, // account not active
  20404, // resource not found: usually a wrong account SID in the URL
  21212, // invalid From
  21603, // From required
  21606, // From is not a message-capable sender
  21655, // ContentSid invalid / unknown
  21656, // ContentVariables invalid
  21660, // From does not belong to the account
  21910, // From and To of different channels (e.g. From without `whatsapp:`)
  63005, // channel did not accept the content (template not approved)
  63007, // no WhatsApp sender (Channel) for the From address
  63027, // template does not exist for the language
  63028, // number of template parameters does not match
]);

// The lead cannot receive WhatsApp messages at this number.
const RECIPIENT = new Set([
  21211, // invalid To
  21408, // no permission to send to the region
  21610, // the recipient opted out (STOP)
  21612, // cannot route to this To
  21614, // To is not a valid mobile number
  63003, // Channel could not find the To address (not on WhatsApp)
  63024, // invalid message recipient
  63049, // Meta chose not to deliver (marketing limits / ecosystem protection)
]);

// Worth retrying later with backoff.
const TRANSIENT = new Set([
  20429, // too many concurrent requests
  20500, // internal server error
  20503, // service unavailable
  21611, // sender queue full
  30001, // queue overflow
  63018, // channel rate limit exceeded
  63038, // daily message limit reached
]);

/**
 * What kind of failure a Twilio error code (and/or HTTP status) is. Codes win over the status;
 * unknown codes fall back to the status: 429/5xx transient, other 4xx configuration (a request
 * Twilio refuses is ours to fix, retrying it would only repeat the refusal).
 */
export function classifyTwilioError(code: number | undefined, httpStatus?: number): SendFailureKind {
  if (code !== undefined) {
    if (WINDOW.has(code)) return 'window_closed';
    if (RECIPIENT.has(code)) return 'recipient';
    if (TRANSIENT.has(code)) return 'transient';
    if (CONFIGURATION.has(code)) return 'configuration';
  }
  if (httpStatus === undefined) {
    // An asynchronous failure with an unknown code: the message itself did not go out; treat
    // it as about the recipient rather than retrying the same message forever.
    return 'recipient';
  }
  if (httpStatus === 429 || httpStatus >= 500) return 'transient';
  return 'configuration';
}
