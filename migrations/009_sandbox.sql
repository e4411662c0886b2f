-- Sandbox (test mode, issue 12): every workspace can have sandbox keys beside its live keys, and a
-- lead submitted with a sandbox key is a sandbox lead. Sandbox and live data never mix: a lead is
-- read only with a key of its own mode, and a phone is unique per workspace *and mode*, so a phone
-- used in the sandbox does not block the same phone live (docs/SANDBOX.md).

ALTER TABLE api_keys ADD COLUMN livemode boolean NOT NULL DEFAULT true;
ALTER TABLE leads ADD COLUMN livemode boolean NOT NULL DEFAULT true;

ALTER TABLE leads DROP CONSTRAINT leads_workspace_phone;
ALTER TABLE leads ADD CONSTRAINT leads_workspace_mode_phone UNIQUE (workspace_id, livemode, phone_normalized);

-- The retention pass deletes sandbox leads older than 7 days (src/sandbox/sandbox-retention.ts).
CREATE INDEX leads_sandbox_created ON leads (created_at) WHERE NOT livemode;
