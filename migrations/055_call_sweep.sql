-- The call sweep (src/voice/call-sweep.ts) looks at calls whose end has not arrived.
-- scheduled_at: when Vapi dials a call it holds for later (its schedulePlan.earliestAt, learned by
-- the sweep), so such a call counts as overdue only from then. end_unknown_at: the sweep gave up
-- waiting for the call's end and handed the lead to a person; it only still cancels a held call.
ALTER TABLE call_sessions ADD COLUMN scheduled_at timestamptz, ADD COLUMN end_unknown_at timestamptz;

-- Calls Vapi held for later whose lead was erased (src/leads/lead-erasure.ts): only the provider's
-- call id and the workspace stay, until the sweep has cancelled the call at Vapi.
CREATE TABLE voice_calls_to_cancel (
  provider_call_id text PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- The sweep reads the calls not ended every minute: only those, not every call ever made.
CREATE INDEX call_sessions_open ON call_sessions (created_at) WHERE status <> 'ended';
