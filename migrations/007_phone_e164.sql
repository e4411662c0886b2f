-- Phone numbers become E.164 (issue 11). New submissions are normalised by libphonenumber-js
-- (src/leads/phone.ts); existing leads are re-normalised by this migration's data step,
-- src/leads/phone-renormalization.ts, which the migrator runs right after this file in the same
-- transaction (the rules live in code, so they cannot be written in SQL). docs/API.md, "Phone
-- numbers", says what happens to two leads that become the same number.

-- One row per lead that the re-normalisation found to be the same number as an older lead of its
-- workspace: both leads are kept; the one named here got `<E.164>#<its id>` as phone_normalized,
-- so the unique index on (workspace_id, phone_normalized) holds and nobody is called or written
-- to twice. Deleting either lead settles it (the row goes with its lead).
CREATE TABLE lead_phone_collisions (
  lead_id uuid PRIMARY KEY REFERENCES leads (id) ON DELETE CASCADE,
  -- No foreign key: when the kept lead is deleted, this row still says what happened.
  kept_lead_id uuid NOT NULL,
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  found_at timestamptz NOT NULL DEFAULT now()
);
