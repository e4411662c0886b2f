-- The times listSlots offered to a lead, per conversation (the lead's WhatsApp thread, or one
-- call): bookConsult books only a start offered to this lead in this conversation, whatever
-- the model says. Kept in the database, so a retried or resumed turn and the voice tool calls
-- see the same offers (docs/AGENT.md, "Safety").
CREATE TABLE offered_slots (
  lead_id uuid NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
  -- `whatsapp`, or `call:` and the provider's call id.
  conversation text NOT NULL,
  start_at timestamptz NOT NULL,
  offered_at timestamptz NOT NULL,
  PRIMARY KEY (lead_id, conversation, start_at)
);
