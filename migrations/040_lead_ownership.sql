-- Who owns a lead and how long it has waited for a person (docs/DASHBOARD.md, "The operator's day").
-- owner_operator_id: the operator who took the lead over, set by Take over in the transaction of
-- its status change; a lead handed back to the agent (new or in_conversation) has none.
-- needs_human_since: when the lead last moved to needs_human, kept by the trigger below so every
-- path to a person (the agent's hand-over, a failed call, a cancelled booking, Take over) sets it.
ALTER TABLE leads
  ADD COLUMN owner_operator_id uuid REFERENCES operators (id) ON DELETE SET NULL,
  ADD COLUMN needs_human_since timestamptz;

UPDATE leads SET needs_human_since = updated_at WHERE status = 'needs_human';

CREATE FUNCTION leads_track_waiting() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.needs_human_since := CASE WHEN NEW.status = 'needs_human' THEN now() END;
  IF NEW.status IN ('new', 'in_conversation') THEN
    NEW.owner_operator_id := NULL;
  END IF;
  RETURN NEW;
END $$;

-- The WHEN clause keeps the function out of every update that leaves the status alone (the hot
-- paths update leads far more often than they change a status).
CREATE TRIGGER leads_track_waiting BEFORE UPDATE OF status ON leads
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION leads_track_waiting();

-- The inbox's "waiting longest" order.
CREATE INDEX leads_waiting ON leads (workspace_id, needs_human_since, id) WHERE status = 'needs_human';

-- Per-operator read markers: the newest inbound message time the operator had when they last
-- opened the lead. A lead whose last_inbound_at is later is unread for them.
CREATE TABLE lead_reads (
  lead_id uuid NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
  operator_id uuid NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  read_through timestamptz NOT NULL,
  PRIMARY KEY (lead_id, operator_id)
);
CREATE INDEX lead_reads_operator ON lead_reads (operator_id);

-- The inbox's settings of a workspace (waiting thresholds), edited on the Agent page.
ALTER TABLE workspaces ADD COLUMN inbox_settings jsonb NOT NULL DEFAULT '{}';

-- Open pages learn of a change of owner as of a change of status (migration 021's function, one
-- condition more): the other operators' alert stops ringing once someone has taken the lead.
CREATE OR REPLACE FUNCTION leads_announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT leadintake_watched() THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    PERFORM leadintake_announce(w, 'lead.created', n, ids)
       FROM (SELECT workspace_id AS w, count(*) AS n, (array_agg(id))[1:20] AS ids FROM new_rows GROUP BY 1) g;
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM leadintake_announce(w, 'lead.deleted', n, ids)
       FROM (SELECT workspace_id AS w, count(*) AS n, (array_agg(id))[1:20] AS ids FROM old_rows GROUP BY 1) g;
  ELSE
    PERFORM leadintake_announce(w, 'lead.status', n, ids)
       FROM (SELECT nw.workspace_id AS w, count(*) AS n, (array_agg(nw.id))[1:20] AS ids
               FROM new_rows nw JOIN old_rows o ON o.id = nw.id
              WHERE nw.status IS DISTINCT FROM o.status OR nw.booking_uid IS DISTINCT FROM o.booking_uid
                 OR nw.owner_operator_id IS DISTINCT FROM o.owner_operator_id GROUP BY 1) g;
  END IF;
  RETURN NULL;
END $$;
