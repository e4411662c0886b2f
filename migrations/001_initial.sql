-- Foundation schema: workspaces, API keys, leads, call sessions, the lead timeline,
-- the job outbox and the rate-limit counters.

CREATE TABLE workspaces (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  slug text NOT NULL CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  name text NOT NULL,
  channel text NOT NULL CHECK (channel IN ('voice', 'whatsapp')),
  -- Provider settings as one AES-256-GCM blob whose associated data is the workspace id,
  -- so a ciphertext copied to another workspace does not decrypt.
  settings_ciphertext bytea,
  created_at timestamptz NOT NULL DEFAULT now(),
  deleted_at timestamptz
);
-- A deleted workspace frees its slug.
CREATE UNIQUE INDEX workspaces_live_slug ON workspaces (slug) WHERE deleted_at IS NULL;

CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  name text NOT NULL,
  prefix text NOT NULL,
  key_hash bytea NOT NULL UNIQUE,
  hourly_limit integer NOT NULL CHECK (hourly_limit > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id);

CREATE TABLE leads (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  name text NOT NULL,
  phone text NOT NULL,
  phone_normalized text NOT NULL,
  email text,
  goal text,
  consented_at timestamptz NOT NULL,
  consent_ip text,
  consent_user_agent text,
  metadata jsonb NOT NULL DEFAULT '{}',
  form_responses jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'new'
    CHECK (status IN ('new', 'in_conversation', 'booked', 'unqualified', 'needs_human')),
  qualification_notes text,
  booking_uid text,
  booking_start timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- Race-free uniqueness: concurrent submissions of one phone are decided by this index.
  CONSTRAINT leads_workspace_phone UNIQUE (workspace_id, phone_normalized)
);
CREATE INDEX leads_workspace_created ON leads (workspace_id, created_at DESC);

CREATE TABLE call_sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  lead_id uuid NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
  provider_call_id text NOT NULL UNIQUE,
  status text NOT NULL,
  started_at timestamptz,
  ended_at timestamptz,
  duration_seconds integer,
  summary text,
  transcript text,
  recording_url text,
  ended_reason text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX call_sessions_lead ON call_sessions (lead_id, created_at DESC);

-- Append-only timeline, written in the same transaction as the change it records.
CREATE TABLE lead_events (
  id bigserial PRIMARY KEY,
  lead_id uuid NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
  type text NOT NULL,
  data jsonb NOT NULL DEFAULT '{}',
  at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX lead_events_lead ON lead_events (lead_id, id);

-- Transactional outbox: a row is committed with the lead that causes it, then the relay
-- moves it into pg-boss outside the request's transaction (see docs/ARCHITECTURE.md).
CREATE TABLE outbox (
  id bigserial PRIMARY KEY,
  job_id uuid NOT NULL DEFAULT gen_random_uuid(),
  queue text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Per-key hourly counters. UNLOGGED: the hot row of a busy key would otherwise wait for a
-- WAL flush on every request. The table survives a clean restart; after a crash of the
-- database server PostgreSQL empties it, which forgives at most one hour of usage.
CREATE UNLOGGED TABLE rate_limit_counters (
  api_key_id uuid NOT NULL,
  window_start timestamptz NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (api_key_id, window_start)
);
