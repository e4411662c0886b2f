-- Inbound provider webhooks already handled, so a replayed or re-sent delivery changes nothing.
-- Generic on purpose: Cal.com first, later Vapi, Twilio and Meta receivers share it. A receipt
-- is written in the same transaction as the change the delivery causes.
CREATE TABLE webhook_receipts (
  provider text NOT NULL,
  -- Per workspace: two workspaces may subscribe to one provider account and then both receive
  -- the same event; each must handle its own copy.
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  -- Provider-specific identity of the event (Cal.com: trigger + booking uid, + start time
  -- for reschedules).
  dedupe_key text NOT NULL,
  -- The lead it concerned, when one matched; deliveries about unknown bookings are kept too.
  lead_id uuid REFERENCES leads (id) ON DELETE SET NULL,
  type text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, workspace_id, dedupe_key)
);
-- For pruning old receipts by age.
CREATE INDEX webhook_receipts_received ON webhook_receipts (received_at);
-- Deleting a lead (a failed voice dispatch does) sets lead_id to null here; without this
-- index that would scan the whole table.
CREATE INDEX webhook_receipts_lead ON webhook_receipts (lead_id) WHERE lead_id IS NOT NULL;

-- Cal.com webhooks find their lead by booking uid within the workspace.
CREATE INDEX leads_workspace_booking_uid ON leads (workspace_id, booking_uid) WHERE booking_uid IS NOT NULL;
