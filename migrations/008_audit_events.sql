-- The operators' audit trail (issue 11): actions whose subject may no longer exist, such as the
-- erasure of a lead. Lead timelines (lead_events) go with their lead, so they cannot say that the
-- lead was erased. A row here carries no personal data: who acted, when, what, and which ids.
CREATE TABLE audit_events (
  id bigserial PRIMARY KEY,
  -- No foreign keys: the trail outlives what it names (workspaces are only soft-deleted, but an
  -- audit row must never block or vanish with a change elsewhere).
  workspace_id uuid,
  -- e.g. `lead.erased`.
  type text NOT NULL,
  -- The id of what was acted on (a lead id for `lead.erased`).
  subject_id uuid,
  -- Who: `cli:<os user>` for the command line, the operator's account for the dashboard.
  actor text NOT NULL,
  -- Counts and flags about what was done; never names, phone numbers, e-mail addresses or texts.
  data jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(data) = 'object'),
  at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_events_workspace ON audit_events (workspace_id, id DESC);
CREATE INDEX audit_events_subject ON audit_events (subject_id) WHERE subject_id IS NOT NULL;
