// Our small interface to a voice-call provider. The real implementation is the Vapi HTTP
// client (vapi-client.ts); tests and the demo point that same client at the Vapi simulator.

/** Where the provider sends a call's server messages, and how it proves it is the provider. */
export interface CallServer {
  url: string;
  /** Static headers sent with every message (our `X-Vapi-Secret`). */
  headers?: Record<string, string>;
  /** A provider-side credential (the HMAC plan) instead of static headers. */
  credentialId?: string;
  /** How long the provider waits for our answer (Vapi's default is 20). */
  timeoutSeconds?: number;
}

/** A tool the provider's model may call, answered at `server` (Vapi's function-tool shape). */
export interface CallTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
  server: CallServer;
}

export interface PlaceCallRequest {
  /** The workspace's provider API key (Bearer). */
  apiKey: string;
  assistantId: string;
  phoneNumberId: string;
  customer: { number: string; name: string };
  /** Fills the assistant's `{{placeholders}}`. */
  variableValues: Record<string, string>;
  /** Correlation ids that come back on every server message about the call. */
  metadata: { leadId: string; workspaceId: string };
  /** Our server URL for this call; absent leaves the assistant's own. */
  server?: CallServer;
  /** The message types sent to `server`. */
  serverMessages?: string[];
  /** Tools added to the assistant's own for this call. */
  tools?: CallTool[];
  /**
   * Present: the provider listens for an answering machine on this call and, on one, leaves
   * `message` (null: hangs up without a word). The call then ends as `voicemail`.
   */
  voicemail?: { message: string | null };
  /** The provider places the call at this time, not now (it still answers with the call's id). */
  earliestAt?: Date;
}

/**
 * One HTTP exchange with the provider, for the integration log: what was sent and what came back
 * (the body as text), or the network error. Never holds the API key.
 */
export interface ProviderExchange {
  method: string;
  path: string;
  requestBody?: unknown;
  httpStatus?: number;
  responseText?: string;
  error?: string;
  ms: number;
}

export type PlaceCallResult =
  | { ok: true; providerCallId: string; status: string }
  /** `message` is the provider's response text unchanged, or a plain network/timeout description. */
  /** `code` do_not_contact: our own gate refused the number (src/contact-plan/suppression-gate.ts); never retried. */
  | { ok: false; message: string; httpStatus?: number; code?: 'do_not_contact' };

export interface VoiceProvider {
  placeCall(request: PlaceCallRequest): Promise<PlaceCallResult>;
  /** Optional: the same call, with the HTTP exchange for the integration log. */
  placeCallTraced?(request: PlaceCallRequest): Promise<{ result: PlaceCallResult; exchange: ProviderExchange }>;
}

/** A saved provider resource looked up by id (`workspace verify`). */
export type LookupResult =
  | { ok: true; exchange?: ProviderExchange }
  | { ok: false; httpStatus?: number; message: string; exchange?: ProviderExchange };

/** Checks a workspace's provider settings without placing a call. */
export interface VoiceSettingsChecker {
  getAssistant(apiKey: string, id: string): Promise<LookupResult>;
  getPhoneNumber(apiKey: string, id: string): Promise<LookupResult>;
}

/**
 * A call as the provider describes it (`GET /call/{id}`): its status, when a held call is dialled
 * (`schedulePlan.earliestAt`), and the whole object (an end-of-call report is built from it).
 */
export interface ProviderCall {
  id: string;
  status: string;
  earliestAt: Date | null;
  raw: Record<string, unknown>;
}

/** `notFound`: the provider answered 404 (it does not know the call); anything else may pass. */
export type CallControlResult<T> = { ok: true; value: T } | { ok: false; notFound: boolean; message: string };

/** Looks up and cancels calls already placed (the call sweep, src/voice/call-sweep.ts). */
export interface CallControl {
  getCall(apiKey: string, id: string): Promise<CallControlResult<ProviderCall>>;
  /** Deletes the call; the provider cancels a call it still holds for later. */
  deleteCall(apiKey: string, id: string): Promise<CallControlResult<null>>;
}
