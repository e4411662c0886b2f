-- Internal notes on a lead (docs/DASHBOARD.md, "Internal notes"): written by operators, never sent
-- to the lead. The operator decides per note whether the agent may read it (`visible_to_agent`,
-- off by default); shared notes reach the agent's prompt inside its quoted lead-data block.
-- Erased with the lead (cascade); a note outlives its author's account, without the author.
CREATE TABLE lead_notes (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  lead_id uuid NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
  operator_id uuid REFERENCES operators (id) ON DELETE SET NULL,
  text text NOT NULL CHECK (char_length(text) BETWEEN 1 AND 2000),
  visible_to_agent boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX lead_notes_by_lead ON lead_notes (lead_id, created_at DESC, id DESC);
