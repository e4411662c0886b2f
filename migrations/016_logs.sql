-- The dashboard's Logs page (docs/DASHBOARD.md, "Logs, dead letters and the audit log").

-- The integration log's latency and error text as columns of their own, so the page can show and
-- filter them without reading each payload. Filled by the writers (src/integration-log/); rows
-- written before this migration have neither (their latency, where there was one, is in the payload).
ALTER TABLE integration_events ADD COLUMN latency_ms integer, ADD COLUMN error text;

-- "Errors only", newest first, read off a small partial index: failures are a few rows among
-- many, and walking the workspace's whole log to find 50 of them is what this avoids. The page's
-- query repeats this predicate word for word so the planner can use the index.
CREATE INDEX integration_events_errors ON integration_events (workspace_id, id DESC)
  WHERE error IS NOT NULL OR http_status >= 400;
-- One provider's entries, newest first (a rare provider would otherwise mean a long walk).
CREATE INDEX integration_events_provider ON integration_events (workspace_id, provider, id DESC);

-- Live: a new log entry is announced like the leads' changes (migration 011): one NOTIFY per
-- workspace per statement, with the leads it names (kind `integration`).
CREATE FUNCTION integration_events_announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM leadintake_announce(w, 'integration', n, ids)
     FROM (SELECT workspace_id AS w, count(DISTINCT lead_id) AS n, (array_agg(DISTINCT lead_id) FILTER (WHERE lead_id IS NOT NULL))[1:20] AS ids
             FROM new_rows WHERE workspace_id IS NOT NULL GROUP BY 1) g;
  RETURN NULL;
END $$;
CREATE TRIGGER integration_events_announce_insert AFTER INSERT ON integration_events REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION integration_events_announce();
