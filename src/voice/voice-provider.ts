// Our small interface to a voice-call provider. The real implementation is the Vapi HTTP
// client (vapi-client.ts); tests and the demo point that same client at the Vapi simulator.

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
}

export type PlaceCallResult =
  | { ok: true; providerCallId: string; status: string }
  /** `message` is the provider's response text unchanged, or a plain network/timeout description. */
  | { ok: false; message: string; httpStatus?: number };

export interface VoiceProvider {
  placeCall(request: PlaceCallRequest): Promise<PlaceCallResult>;
}
