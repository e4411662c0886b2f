-- The Analytics page's per-lead facts (docs/DASHBOARD.md, "Analytics"; docs/PERFORMANCE.md,
-- "Analytics"). Reading each lead's timeline for a 90-day period of a busy workspace costs one
-- index look-up per lead (seconds for 260,000 leads); this table keeps, per lead, the moments the
-- page needs, so the page reads one narrow row per lead in the period instead.
--
-- Exact, not sampled: statement-level triggers keep it in the transaction of the change —
-- a lead's insert adds its row, a status change updates it, a timeline entry that is a first
-- contact, an answer from the lead or a booking sets the earliest such moment, and deleting a
-- lead (erasure) deletes its row with it. Days are not stored: a lead's local day depends on the
-- workspace's time zone, which may change, so the query computes it from created_at.
CREATE TABLE lead_funnel (
  lead_id uuid PRIMARY KEY REFERENCES leads (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL,
  livemode boolean NOT NULL,
  created_at timestamptz NOT NULL,
  status text NOT NULL,
  -- First `message.sent` or `call.dispatched`.
  contacted_at timestamptz,
  -- First `message.received` or `call.started`.
  conversed_at timestamptz,
  -- First timeline entry that moved the lead to `booked`.
  booked_at timestamptz
);
CREATE INDEX lead_funnel_period ON lead_funnel (workspace_id, created_at)
  INCLUDE (livemode, status, contacted_at, conversed_at, booked_at);

CREATE FUNCTION lead_funnel_leads() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    -- ON CONFLICT: a statement that inserts a lead with its first timeline entries may fire the
    -- lead_events trigger first, which already added the row.
    INSERT INTO lead_funnel (lead_id, workspace_id, livemode, created_at, status)
    SELECT id, workspace_id, livemode, created_at, status FROM new_rows
    ON CONFLICT (lead_id) DO NOTHING;
  ELSE
    UPDATE lead_funnel f SET status = nw.status
      FROM new_rows nw JOIN old_rows o ON o.id = nw.id
     WHERE f.lead_id = nw.id AND nw.status IS DISTINCT FROM o.status;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER lead_funnel_leads_insert AFTER INSERT ON leads REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_funnel_leads();
CREATE TRIGGER lead_funnel_leads_update AFTER UPDATE ON leads REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_funnel_leads();

CREATE FUNCTION lead_funnel_events() RETURNS trigger LANGUAGE plpgsql AS $$
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
  WHERE excluded.contacted_at IS NOT NULL OR excluded.conversed_at IS NOT NULL OR excluded.booked_at IS NOT NULL;
  RETURN NULL;
END $$;
CREATE TRIGGER lead_funnel_events_insert AFTER INSERT ON lead_events REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_funnel_events();

-- The leads that exist already, with their timelines.
INSERT INTO lead_funnel (lead_id, workspace_id, livemode, created_at, status, contacted_at, conversed_at, booked_at)
SELECT l.id, l.workspace_id, l.livemode, l.created_at, l.status,
       (SELECT min(e.at) FROM lead_events e WHERE e.lead_id = l.id AND e.type IN ('message.sent', 'call.dispatched')),
       (SELECT min(e.at) FROM lead_events e WHERE e.lead_id = l.id AND e.type IN ('message.received', 'call.started')),
       (SELECT min(e.at) FROM lead_events e WHERE e.lead_id = l.id AND e.data->>'to' = 'booked')
  FROM leads l;
