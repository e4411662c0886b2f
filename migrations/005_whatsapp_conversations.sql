-- WhatsApp conversations (issue 5): the agent's turns, the messages of both directions, and the
-- per-lead flags shared by the inbound receiver and the turn engine (docs/WHATSAPP.md).

-- The workspace's kill switch: off, queued turns end without sending.
ALTER TABLE workspaces ADD COLUMN agent_enabled boolean NOT NULL DEFAULT true;

ALTER TABLE leads
  -- The lead answered STOP (or a similar word): nothing is ever sent again.
  ADD COLUMN opted_out_at timestamptz,
  -- The lead's latest message: the 24-hour customer-service window is counted from it.
  ADD COLUMN last_inbound_at timestamptz,
  -- Set when an inbound message enqueued a turn that has not started yet; further messages then
  -- add no job of their own (the coming turn answers them together). Cleared by the turn.
  ADD COLUMN turn_requested_at timestamptz;

-- One agent turn: the first-contact template, or the answer to the lead's unanswered messages.
-- Checkpointed: `transcript` keeps the model's tool rounds as they happen, the outbound message
-- row is written before the provider is called, and `state` says which step finished last.
CREATE TABLE agent_turns (
  id bigserial PRIMARY KEY,
  lead_id uuid NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('first_contact', 'reply')),
  -- generating: the model loop runs; ready: the message is stored, not yet accepted by the provider;
  -- sent: accepted; silent: the model had nothing to say; failed / cancelled: ended without sending.
  state text NOT NULL CHECK (state IN ('generating', 'ready', 'sent', 'silent', 'failed', 'cancelled')),
  -- Chat messages after the lead's messages: assistant tool calls and tool results, in order.
  transcript jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(transcript) = 'array'),
  model_calls integer NOT NULL DEFAULT 0,
  -- Why a turn failed or was cancelled (a code such as window_closed, insufficient_quota).
  outcome text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_turns_lead ON agent_turns (lead_id, id);
-- At most one unfinished turn per lead, whatever the workers do.
CREATE UNIQUE INDEX agent_turns_one_open ON agent_turns (lead_id) WHERE state IN ('generating', 'ready');

CREATE TABLE whatsapp_messages (
  id bigserial PRIMARY KEY,
  lead_id uuid NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
  direction text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  -- Outbound: the turn that wrote it. Inbound: the turn that answered it; null until one claims it.
  turn_id bigint REFERENCES agent_turns (id) ON DELETE SET NULL,
  provider text NOT NULL CHECK (provider IN ('twilio', 'meta')),
  kind text NOT NULL CHECK (kind IN ('text', 'template')),
  -- The text; for a template, what the lead sees when we know it, else a description.
  body text NOT NULL,
  template_variables jsonb,
  -- Outbound only: deterministic, so a retried send and a status callback find the same row.
  idempotency_key text UNIQUE,
  provider_message_id text,
  -- Inbound: received. Outbound: pending (stored, not yet accepted), then the provider's
  -- statuses: accepted, sent, delivered, read, or failed / undelivered; cancelled when never sent.
  status text NOT NULL,
  error_code text,
  error_message text,
  created_at timestamptz NOT NULL DEFAULT now(),
  status_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((direction = 'outbound') = (idempotency_key IS NOT NULL))
);
-- Inbound duplicates (a provider re-sending a webhook) are decided by this index.
CREATE UNIQUE INDEX whatsapp_messages_provider_id ON whatsapp_messages (provider, provider_message_id)
  WHERE provider_message_id IS NOT NULL;
CREATE INDEX whatsapp_messages_lead ON whatsapp_messages (lead_id, id);
CREATE INDEX whatsapp_messages_unanswered ON whatsapp_messages (lead_id, id)
  WHERE direction = 'inbound' AND turn_id IS NULL;
