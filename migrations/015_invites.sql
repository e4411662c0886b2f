-- Invitations to a workspace (docs/DASHBOARD.md, "Providers, API keys and team"): an owner invites
-- an e-mail address with a role; the one-time link carries 32 random bytes and this table keeps
-- only their SHA-256, like operator_sessions, so a copy of the table accepts nothing. Accepting
-- deletes the row (one use); an expired row is refused and removed on the next invitation.
CREATE TABLE workspace_invites (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash bytea NOT NULL UNIQUE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  email text NOT NULL CHECK (email = lower(email) AND position('@' IN email) > 1),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'agent', 'viewer')),
  invited_by uuid REFERENCES operators (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX workspace_invites_workspace ON workspace_invites (workspace_id, expires_at);
