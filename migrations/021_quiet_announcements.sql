-- Live-update triggers that nobody listens to cost nothing (docs/PERFORMANCE.md, "Burst drain").
-- Migration 019 made leadintake_announce() send nothing while no process has a live page open,
-- but each trigger still grouped its transition table by workspace, joined the leads and built
-- the id arrays before asking: about 2 ms of PostgreSQL time per lead during a burst of new
-- leads, a lead's first message and its delivery statuses. The triggers now ask first.

CREATE FUNCTION leadintake_watched() RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM live_listeners WHERE until > now())
$$;

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
              WHERE nw.status IS DISTINCT FROM o.status OR nw.booking_uid IS DISTINCT FROM o.booking_uid GROUP BY 1) g;
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION lead_children_announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT leadintake_watched() THEN
    RETURN NULL;
  END IF;
  PERFORM leadintake_announce(w, TG_ARGV[0], n, ids)
     FROM (SELECT l.workspace_id AS w, count(DISTINCT c.lead_id) AS n, (array_agg(DISTINCT c.lead_id))[1:20] AS ids
             FROM new_rows c JOIN leads l ON l.id = c.lead_id GROUP BY 1) g;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION integration_events_announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT leadintake_watched() THEN
    RETURN NULL;
  END IF;
  PERFORM leadintake_announce(w, 'integration', n, ids)
     FROM (SELECT workspace_id AS w, count(DISTINCT lead_id) AS n, (array_agg(DISTINCT lead_id) FILTER (WHERE lead_id IS NOT NULL))[1:20] AS ids
             FROM new_rows WHERE workspace_id IS NOT NULL GROUP BY 1) g;
  RETURN NULL;
END $$;
