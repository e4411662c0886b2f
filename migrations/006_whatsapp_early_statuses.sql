-- Delivery statuses that arrive before we have recorded the provider's id for our message (the
-- provider may call back before the send's commit). Kept here and applied when the send is
-- recorded; statuses for messages that never turn up are pruned after a day.
CREATE TABLE whatsapp_early_statuses (
  id bigserial PRIMARY KEY,
  provider text NOT NULL CHECK (provider IN ('twilio', 'meta')),
  provider_message_id text NOT NULL,
  status text NOT NULL,
  error_code text,
  error_message text,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX whatsapp_early_statuses_message ON whatsapp_early_statuses (provider, provider_message_id);
CREATE INDEX whatsapp_early_statuses_received ON whatsapp_early_statuses (received_at);
