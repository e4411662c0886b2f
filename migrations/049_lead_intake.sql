-- Lead intake beyond the secret-key API (docs/INTAKE.md): the hosted form, the embed, publishable
-- keys, lead-ad forms and generic webhooks. Each lead records where it came from and, for a form,
-- the exact consent text it was shown.

-- What a key may do: `secret` (the API, server-side), `publishable` (li_pub_…: only creates leads,
-- from the browser origins listed), `form` (the workspace's hosted form; never sent by a client).
ALTER TABLE api_keys
  ADD COLUMN kind text NOT NULL DEFAULT 'secret' CHECK (kind IN ('secret', 'publishable', 'form')),
  ADD COLUMN allowed_origins text[] NOT NULL DEFAULT '{}';

-- The hosted form's settings (language, colour, e-mail required, thank-you, mode…), validated by
-- src/workspaces/form-settings.ts; the logo apart (bytes).
ALTER TABLE workspaces ADD COLUMN form_settings jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(form_settings) = 'object');
CREATE TABLE workspace_logos (
  workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  content_type text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg', 'image/webp', 'image/svg+xml')),
  bytes bytea NOT NULL CHECK (octet_length(bytes) <= 262144),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The consent text a form showed, versioned: editing it makes a new version, and a lead keeps the
-- version it agreed to.
CREATE TABLE consent_texts (
  id bigserial PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  version integer NOT NULL,
  text text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, version)
);

-- A connected source of leads: a Meta Page's lead forms, a Google Ads lead form, a generic webhook.
-- Its secret (a Page token, Google's key, the webhook's secret) is sealed like the providers'
-- credentials (src/workspaces/secret-box.ts).
CREATE TABLE lead_sources (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('meta', 'google', 'webhook')),
  name text NOT NULL,
  -- The public part of its URL: /api/intake/<kind>/<token>.
  token text NOT NULL UNIQUE,
  secret_ciphertext bytea,
  -- Field mapping and the kind's settings (Meta's page id, form ids…).
  config jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  last_lead_at timestamptz,
  last_error text,
  last_error_at timestamptz
);
CREATE INDEX lead_sources_workspace ON lead_sources (workspace_id);

-- Where each lead came from: `api` (a secret key), `form`, `embed`, `publishable`, `meta`, `google`,
-- `webhook`; the source row and the source's own lead id (a retried delivery never makes a
-- second lead); campaign/ad ids and the page a form was on (`source_detail`); the consent text.
ALTER TABLE leads
  ADD COLUMN source text NOT NULL DEFAULT 'api',
  ADD COLUMN source_id uuid REFERENCES lead_sources (id) ON DELETE SET NULL,
  ADD COLUMN source_lead_id text,
  ADD COLUMN source_detail jsonb,
  ADD COLUMN consent_text_id bigint REFERENCES consent_texts (id);
CREATE UNIQUE INDEX leads_source_lead ON leads (source_id, source_lead_id) WHERE source_lead_id IS NOT NULL;

-- Per-address and per-workspace counters of the hosted form and publishable keys (hourly windows,
-- like rate_limit_counters; UNLOGGED for the same reason). The address is kept only as a keyed
-- hash (src/forms/, docs/INTAKE.md); rows older than two hours are pruned by the maintenance pass.
CREATE UNLOGGED TABLE intake_rate_counters (
  scope text NOT NULL,
  window_start timestamptz NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (scope, window_start)
);
