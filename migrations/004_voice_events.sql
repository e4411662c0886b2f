-- Voice channel end to end (issue 4): the integration log, tool calls answered for Vapi, and the
-- call session columns the server messages fill.

-- Every provider request we sent and every provider message we received, secrets redacted, for
-- the operators' Logs page. Generic: Vapi first, then the WhatsApp providers and the LLM.
-- Pruned by age and by a per-workspace cap (src/integrations/integration-log.ts).
CREATE TABLE integration_events (
  id bigserial PRIMARY KEY,
  -- Null for provider traffic no workspace could be matched to.
  workspace_id uuid REFERENCES workspaces (id),
  -- No foreign key: the log outlives a lead rolled back after a failed dispatch, and says so.
  lead_id uuid,
  provider text NOT NULL,
  -- out: we called the provider; in: the provider called us.
  direction text NOT NULL CHECK (direction IN ('in', 'out')),
  -- e.g. `POST /call`, `status-update`, `tool-calls`.
  kind text NOT NULL,
  -- The provider's answer (out) or ours (in); null when there was none (network error).
  http_status integer,
  -- A short word on what came of it: applied, duplicate, unknown-call, error, …
  outcome text,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- The Logs page reads a workspace's newest first; the cap prunes per workspace by id.
CREATE INDEX integration_events_workspace ON integration_events (workspace_id, id DESC);
CREATE INDEX integration_events_created ON integration_events (created_at);
CREATE INDEX integration_events_lead ON integration_events (lead_id, id DESC) WHERE lead_id IS NOT NULL;

-- Tool calls of Vapi's model, claimed before they run and answered from here when Vapi sends the
-- same tool call again: a repeated bookConsult must not book twice.
CREATE TABLE voice_tool_calls (
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  tool_call_id text NOT NULL,
  provider_call_id text NOT NULL,
  lead_id uuid,
  name text NOT NULL,
  -- Null while the tool runs (or if the process died while it ran).
  result text,
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  PRIMARY KEY (workspace_id, tool_call_id)
);
CREATE INDEX voice_tool_calls_created ON voice_tool_calls (created_at);

-- When the end-of-call-report was applied: its values win over those of status updates, whatever
-- order the two arrive in (docs/VOICE.md).
ALTER TABLE call_sessions ADD COLUMN report_received_at timestamptz, ADD COLUMN updated_at timestamptz;
