-- Analytics of reaching leads (issue 36; docs/DASHBOARD.md, "Analytics"): leads reached by attempt
-- number, time to first reach, and contacted leads never reached.
--
-- lead_funnel.reached_at / reached_attempt come from migration 045 (`contact.reached`). A lead is
-- "never reached" when it was contacted, its contact plan has ended and it was not reached; so
-- lead_funnel keeps when the plan last ended. A plan scheduled again afterwards (an operator's
-- retry) runs again: its `contact.scheduled` clears the moment. Kept by a trigger on the timeline
-- like the other moments, so the update of lead_funnel notes the change for the day summaries
-- (migration 020's analytics_changes) as every other moment does.
ALTER TABLE lead_funnel ADD COLUMN plan_ended_at timestamptz;

UPDATE lead_funnel f SET plan_ended_at = p.ended_at
  FROM contact_plans p WHERE p.lead_id = f.lead_id AND p.ended_at IS NOT NULL;

DROP INDEX lead_funnel_period;
CREATE INDEX lead_funnel_period ON lead_funnel (workspace_id, created_at)
  INCLUDE (livemode, status, contacted_at, conversed_at, booked_at, human_at, reached_at, reached_attempt, plan_ended_at);

CREATE FUNCTION lead_funnel_plan() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- The lead's last plan entry of the statement decides: ended (its moment) or running again (NULL).
  UPDATE lead_funnel f SET plan_ended_at = e.ended_at
    FROM (SELECT DISTINCT ON (lead_id) lead_id, CASE WHEN type = 'contact.plan_ended' THEN at END AS ended_at
            FROM new_rows WHERE type IN ('contact.plan_ended', 'contact.scheduled') ORDER BY lead_id, id DESC) e
   WHERE f.lead_id = e.lead_id AND f.plan_ended_at IS DISTINCT FROM e.ended_at;
  RETURN NULL;
END $$;
CREATE TRIGGER lead_funnel_plan_insert AFTER INSERT ON lead_events REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_funnel_plan();

-- The day summaries keep the reach figures too: reached leads, by attempt (1st, 2nd, 3rd, 4th and
-- later), contacted leads never reached, and the (value, count) pairs of the time to first reach.
ALTER TABLE analytics_days
  ADD COLUMN reached integer NOT NULL DEFAULT 0,
  ADD COLUMN reached_by_attempt integer[] NOT NULL DEFAULT '{0,0,0,0}',
  ADD COLUMN never_reached integer NOT NULL DEFAULT 0,
  ADD COLUMN reach_values double precision[] NOT NULL DEFAULT '{}',
  ADD COLUMN reach_counts integer[] NOT NULL DEFAULT '{}';

-- Summaries written before this migration have no reach figures: dropped, the next reader (or the
-- maintenance pass) writes them again.
DELETE FROM analytics_days;
