-- The Analytics page's day summaries (docs/DASHBOARD.md, "Analytics"; docs/PERFORMANCE.md,
-- "Analytics"). lead_funnel (migration 017) keeps one row per lead, but a 90-day period of a busy
-- workspace is still a quarter of a million rows to read and sort on every page load. A past
-- local day rarely changes, so its figures are computed once and kept here; a load then reads one
-- row per past day and only today's leads.
--
-- Written lazily by the reader (src/admin/analytics-days.ts), never on the lead's write path:
-- - a summary is per workspace, time zone, day and mode (live leads only, or live and sandbox),
--   for days that ended at least two hours ago ("closed"); today's figures are always computed;
-- - any change of a lead created more than an hour ago appends a row to analytics_changes (no
--   key, no lock: two writers never wait for each other); the next reader, holding the
--   workspace's advisory lock, deletes those rows and the summaries whose day holds their leads,
--   then recomputes what it needs. A change to a younger lead needs no row: its day cannot have a
--   summary before that change has committed (transactions are far shorter than the hour).
CREATE TABLE analytics_days (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  time_zone text NOT NULL,
  with_sandbox boolean NOT NULL,
  day date NOT NULL,
  starts_at timestamptz NOT NULL,
  ends_at timestamptz NOT NULL,
  leads int NOT NULL,
  contacted int NOT NULL,
  conversation int NOT NULL,
  booked int NOT NULL,
  unqualified int NOT NULL,
  needs_human int NOT NULL,
  new int NOT NULL,
  in_conversation int NOT NULL,
  -- The day's exact percentiles (seconds), as the plain query gives them.
  speed_p50 float8,
  speed_p90 float8,
  -- Counts per SPEED_BUCKETS bucket of src/admin/analytics-queries.ts.
  speed_histogram int[] NOT NULL,
  -- The day's speeds and times to booking as (value, count) pairs, values rounded to 0.1 s below
  -- ten minutes, to the second below a day and to the minute beyond, so a period's percentiles
  -- merge the days' pairs instead of reading every lead again.
  speed_values float8[] NOT NULL,
  speed_counts int[] NOT NULL,
  booking_values float8[] NOT NULL,
  booking_counts int[] NOT NULL,
  PRIMARY KEY (workspace_id, time_zone, with_sandbox, day)
);
CREATE INDEX analytics_days_span ON analytics_days (workspace_id, starts_at);

CREATE TABLE analytics_changes (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  livemode boolean NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX analytics_changes_workspace ON analytics_changes (workspace_id);

CREATE FUNCTION analytics_note_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO analytics_changes (workspace_id, livemode, created_at)
    SELECT DISTINCT workspace_id, livemode, created_at FROM old_rows WHERE created_at < now() - interval '1 hour';
  ELSE
    INSERT INTO analytics_changes (workspace_id, livemode, created_at)
    SELECT DISTINCT workspace_id, livemode, created_at FROM new_rows WHERE created_at < now() - interval '1 hour';
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER analytics_changes_insert AFTER INSERT ON lead_funnel REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION analytics_note_changes();
CREATE TRIGGER analytics_changes_update AFTER UPDATE ON lead_funnel REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION analytics_note_changes();
CREATE TRIGGER analytics_changes_delete AFTER DELETE ON lead_funnel REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION analytics_note_changes();

-- A later message of a lead already contacted used to rewrite its lead_funnel row with the same
-- moments; now the row is touched only when a moment becomes earlier (or known), so a long
-- conversation of an old lead does not invalidate its day's summary at every message.
CREATE OR REPLACE FUNCTION lead_funnel_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO lead_funnel AS f (lead_id, workspace_id, livemode, created_at, status, contacted_at, conversed_at, booked_at)
  SELECT l.id, l.workspace_id, l.livemode, l.created_at, l.status, e.contacted_at, e.conversed_at, e.booked_at
    FROM (SELECT lead_id,
                 min(at) FILTER (WHERE type IN ('message.sent', 'call.dispatched')) AS contacted_at,
                 min(at) FILTER (WHERE type IN ('message.received', 'call.started')) AS conversed_at,
                 min(at) FILTER (WHERE data->>'to' = 'booked') AS booked_at
            FROM new_rows
           WHERE type IN ('message.sent', 'call.dispatched', 'message.received', 'call.started') OR data->>'to' = 'booked'
           GROUP BY lead_id) e
    JOIN leads l ON l.id = e.lead_id
  ON CONFLICT (lead_id) DO UPDATE SET
    -- least() skips NULLs: the earliest known moment wins.
    contacted_at = least(f.contacted_at, excluded.contacted_at),
    conversed_at = least(f.conversed_at, excluded.conversed_at),
    booked_at = least(f.booked_at, excluded.booked_at)
  WHERE excluded.contacted_at < f.contacted_at OR (f.contacted_at IS NULL AND excluded.contacted_at IS NOT NULL)
     OR excluded.conversed_at < f.conversed_at OR (f.conversed_at IS NULL AND excluded.conversed_at IS NOT NULL)
     OR excluded.booked_at < f.booked_at OR (f.booked_at IS NULL AND excluded.booked_at IS NOT NULL);
  RETURN NULL;
END $$;
