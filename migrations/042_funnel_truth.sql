-- The funnel counts every lead that was contacted, however its events arrived, and knows which
-- leads a person stepped in on (docs/DASHBOARD.md, "Analytics").
--
-- A voice call whose first server message arrives before the call session is recorded (Vapi is
-- faster than our commit, or the process died in between) is reconciled: its timeline says
-- `call.reconciled`, never `call.dispatched`. lead_funnel counted only the latter as a first
-- contact, so such a lead had a conversation but no contact and no speed to lead. Now a
-- reconciled call is a first contact too.
--
-- human_at: the first moment a person stepped in — the lead moved to `needs_human` (a hand-over,
-- a take-over, a failed call) or an operator took over, replied or set its outcome. It splits the
-- outcomes into those the AI reached alone and those reached after a person stepped in.
ALTER TABLE lead_funnel ADD COLUMN human_at timestamptz;

DROP INDEX lead_funnel_period;
CREATE INDEX lead_funnel_period ON lead_funnel (workspace_id, created_at)
  INCLUDE (livemode, status, contacted_at, conversed_at, booked_at, human_at);

CREATE OR REPLACE FUNCTION lead_funnel_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO lead_funnel AS f
         (lead_id, workspace_id, livemode, created_at, status, contacted_at, conversed_at, booked_at, human_at)
  SELECT l.id, l.workspace_id, l.livemode, l.created_at, l.status,
         e.contacted_at, e.conversed_at, e.booked_at, e.human_at
    FROM (SELECT lead_id,
                 min(at) FILTER (WHERE type IN ('message.sent', 'call.dispatched', 'call.reconciled'))
                   AS contacted_at,
                 min(at) FILTER (WHERE type IN ('message.received', 'call.started')) AS conversed_at,
                 min(at) FILTER (WHERE data->>'to' = 'booked') AS booked_at,
                 min(at) FILTER (WHERE data->>'to' = 'needs_human'
                                    OR type IN ('operator.took_over', 'operator.replied', 'operator.outcome_set'))
                   AS human_at
            FROM new_rows
           WHERE type IN ('message.sent', 'call.dispatched', 'call.reconciled', 'message.received', 'call.started',
                          'operator.took_over', 'operator.replied', 'operator.outcome_set')
              OR data->>'to' IN ('booked', 'needs_human')
           GROUP BY lead_id) e
    JOIN leads l ON l.id = e.lead_id
  ON CONFLICT (lead_id) DO UPDATE SET
    -- least() skips NULLs: the earliest known moment wins.
    contacted_at = least(f.contacted_at, excluded.contacted_at),
    conversed_at = least(f.conversed_at, excluded.conversed_at),
    booked_at = least(f.booked_at, excluded.booked_at),
    human_at = least(f.human_at, excluded.human_at)
  WHERE excluded.contacted_at < f.contacted_at OR (f.contacted_at IS NULL AND excluded.contacted_at IS NOT NULL)
     OR excluded.conversed_at < f.conversed_at OR (f.conversed_at IS NULL AND excluded.conversed_at IS NOT NULL)
     OR excluded.booked_at < f.booked_at OR (f.booked_at IS NULL AND excluded.booked_at IS NOT NULL)
     OR excluded.human_at < f.human_at OR (f.human_at IS NULL AND excluded.human_at IS NOT NULL);
  RETURN NULL;
END $$;

-- The leads that exist: reconciled calls become first contacts, and a person's first step is known.
UPDATE lead_funnel f
   SET contacted_at = least(f.contacted_at, e.contacted_at), human_at = e.human_at
  FROM (SELECT lead_id,
               min(at) FILTER (WHERE type = 'call.reconciled') AS contacted_at,
               min(at) FILTER (WHERE data->>'to' = 'needs_human'
                                  OR type IN ('operator.took_over', 'operator.replied', 'operator.outcome_set'))
                 AS human_at
          FROM lead_events
         WHERE type IN ('call.reconciled', 'operator.took_over', 'operator.replied', 'operator.outcome_set')
            OR data->>'to' = 'needs_human'
         GROUP BY lead_id) e
 WHERE f.lead_id = e.lead_id;

-- A call that was answered but whose report arrived before its in-progress status update never
-- got its `call.started` (src/voice/call-events.ts records it now): its session's start is the
-- moment the lead was in conversation.
UPDATE lead_funnel f SET conversed_at = c.started_at
  FROM (SELECT lead_id, min(started_at) AS started_at
          FROM call_sessions WHERE started_at IS NOT NULL GROUP BY lead_id) c
 WHERE f.lead_id = c.lead_id AND f.conversed_at IS NULL;

-- The day summaries gain the split; every summary is recomputed by its next reader, with the
-- corrected counts (so the changes just noted by the backfill are moot).
ALTER TABLE analytics_days ADD COLUMN booked_after_person int NOT NULL DEFAULT 0,
                           ADD COLUMN unqualified_after_person int NOT NULL DEFAULT 0;
DELETE FROM analytics_days;
DELETE FROM analytics_changes;
