-- The inbox on a large workspace (docs/DASHBOARD.md, "Inbox"; docs/PERFORMANCE.md, "Dashboard inbox").

-- Search by part of a name: a trigram index answers `name ILIKE '%…%'` without scanning the
-- workspace. pg_trgm ships with PostgreSQL (contrib) and is a trusted extension, so the
-- database owner that runs the migrations may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX leads_inbox_name_trgm ON leads USING gin (name gin_trgm_ops);

-- Search by e-mail: the address's leads of a workspace come out of the index already newest
-- first, so the page is read off the index whatever the planner thinks of the rest of the query.
-- Replaces migration 011's (workspace_id, lower(email)) index, which the planner passed over for
-- the newest-first walk of the whole workspace.
DROP INDEX leads_inbox_email;
CREATE INDEX leads_inbox_email ON leads (workspace_id, lower(email), created_at DESC, id DESC) WHERE email IS NOT NULL;

-- The inbox sorted by last activity (`updated_at`: the lead's last status or profile change),
-- keyset pages like the newest-first order. Not keyed on livemode: the inbox asks for
-- `livemode = ANY(…)`, which a btree cannot answer in order from a middle column, so the walk is
-- on (workspace, updated_at) like the newest-first one on 001's leads_workspace_created, and the
-- few sandbox leads are filtered out on the way.
CREATE INDEX leads_inbox_activity ON leads (workspace_id, updated_at DESC, id DESC);

-- The API key that created the lead (the lead page shows its name and prefix). Null for leads
-- created before this migration and for leads not created through the public API.
ALTER TABLE leads ADD COLUMN api_key_id uuid REFERENCES api_keys (id);
