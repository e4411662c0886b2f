// Our small interface to a WhatsApp provider. Two real clients implement it (Twilio's Messages
// API and Meta's WhatsApp Cloud API, each as its own documentation describes it), and each has a simulator that speaks
// the
// same wire protocol; tests and the demo point the real clients at the simulators.

/** What the agent sends. The first contact is business-initiated, so it must be a template. */
export type OutboundContent =
  | { kind: 'text'; text: string }
  /**
   * An approved template. `variables` are positional ({{1}}, {{2}}, …): Twilio sends them as
   * ContentVariables {"1": …}, Meta as body parameters in order.
   */
  | {
      kind: 'template';
      variables: string[];
      /**
       * Another approved template than the workspace's first-contact one (a follow-up's own):
       * Twilio's content SID, or Meta's name and language.
       */
      ref?: { contentSid: string } | { name: string; language: string };
    };

export interface SendMessageRequest {
  /** The lead's normalised phone, `+digits`. */
  to: string;
  content: OutboundContent;
  /**
   * Random per outbound message and stored with it (the same on every retry); lets the provider's
   * status callbacks find it again, and cannot be guessed from another message's.
   */
  idempotencyKey: string;
}

export type SendFailureKind =
  /** The 24-hour customer-service window is closed (Meta 131047, Twilio 63016): do not retry a free-form text. */
  | 'window_closed'
  /** Our credentials or sender are wrong (401/403, bad number id, unknown template): an operator must fix settings. */
  | 'configuration'
  /** The recipient cannot receive (not on WhatsApp, blocked, invalid number). */
  | 'recipient'
  /** 429, 5xx, network errors, timeouts: worth retrying with backoff. */
  | 'transient';

export type SendMessageResult =
  | { ok: true; providerMessageId: string }
  /** `message` is the provider's error text (no secrets), `code` its error code when it gave one. */
  | { ok: false; kind: SendFailureKind; message: string; code?: string | number; httpStatus?: number };

export interface MessagingProvider {
  readonly name: 'twilio' | 'meta';
  send(request: SendMessageRequest): Promise<SendMessageResult>;
}

/** An inbound webhook event, once its signature has been checked and its body parsed. */
export type InboundEvent =
  | {
      type: 'message';
      providerMessageId: string;
      /** The sender, normalised `+digits`. */
      from: string;
      /** Our receiving number (Twilio, `+digits`) or phone-number id (Meta): routes to the workspace. */
      to: string;
      text: string;
      receivedAt: Date;
      /** Set when the provider's text had to be repaired to be stored (src/shared/storable-text.ts). */
      textRepaired?: true;
    }
  | {
      type: 'status';
      providerMessageId: string;
      status: 'queued' | 'sent' | 'delivered' | 'read' | 'failed' | 'undelivered';
      errorCode?: string;
      errorMessage?: string;
      at: Date;
      textRepaired?: true;
    };
