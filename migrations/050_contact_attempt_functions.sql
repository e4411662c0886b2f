-- Counting a contact attempt and recording that a lead was reached, in one place each: the voice
-- path (src/contact-plan/contact-plan-queries.ts) and the WhatsApp triggers (migrations/045, 046)
-- call these functions, so a `contact.attempted` or `contact.reached` entry has one shape whichever
-- channel wrote it. The triggers below are 045's and 046's with their own writes replaced by calls.

-- Counts an attempt (creating the plan of a lead contacted for the first time) and puts it on the
-- timeline as `contact.attempted` (an outbound webhook): the caller's data, then channel, attempt
-- number, kind and outcome over it. Returns the attempt's number; NULL when the lead is gone.
CREATE FUNCTION contact_plan_attempted(p_lead uuid, p_channel text, p_kind text, p_outcome text, p_data jsonb)
RETURNS integer LANGUAGE sql AS $$
  WITH plan AS (
    INSERT INTO contact_plans AS p (lead_id, workspace_id, channel, attempts)
    SELECT l.id, l.workspace_id, p_channel, 1 FROM leads l WHERE l.id = p_lead
    ON CONFLICT (lead_id) DO UPDATE SET attempts = p.attempts + 1, updated_at = now()
    RETURNING attempts
  ), event AS (
    INSERT INTO lead_events (lead_id, type, data)
    SELECT p_lead, 'contact.attempted',
           COALESCE(p_data, '{}')
             || jsonb_build_object('channel', p_channel, 'attempt', attempts, 'kind', p_kind, 'outcome', p_outcome)
      FROM plan
  )
  SELECT attempts FROM plan
$$;

-- The lead answered or replied (analytics: reached by attempt number), once per lead and only for
-- a lead with a plan. `p_attempt` NULL: the plan's attempts so far, at least 1 (a reply may come
-- before any attempt was counted).
CREATE FUNCTION contact_plan_reached(p_lead uuid, p_channel text, p_attempt integer) RETURNS void LANGUAGE sql AS $$
  WITH r AS (
    UPDATE contact_plans SET reached_at = now() WHERE lead_id = p_lead AND reached_at IS NULL
    RETURNING lead_id, attempts
  )
  INSERT INTO lead_events (lead_id, type, data)
  SELECT lead_id, 'contact.reached',
         jsonb_build_object('channel', p_channel, 'attempt', COALESCE(p_attempt, greatest(attempts, 1)))
    FROM r
$$;

-- migrations/045's: a lead's message ends the plan (reached).
CREATE OR REPLACE FUNCTION contact_plan_on_inbound() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM contact_plan_reached(NEW.lead_id, 'whatsapp', NULL);
  PERFORM contact_plan_end(NEW.lead_id, 'replied');
  RETURN NULL;
END $$;

-- migrations/046's: a plan turn was sent (or skipped), its attempt counted through
-- contact_plan_attempted. A skipped send carries the provider's code in the attempt's data.
CREATE OR REPLACE FUNCTION contact_plan_turn_done() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  p jsonb := NEW.plan_on_sent;
  v_sent boolean := NEW.state = 'sent';
  v_status text;
  v_plan record;
  v_next jsonb;
BEGIN
  SELECT status INTO v_status FROM leads WHERE id = NEW.lead_id;
  SELECT * INTO v_plan FROM contact_plans WHERE lead_id = NEW.lead_id FOR UPDATE;
  IF NEW.plan_step IS NOT NULL
     AND (v_plan.lead_id IS NULL OR v_plan.step <> NEW.plan_step OR v_plan.ended_at IS NOT NULL) THEN
    -- The plan moved on while this turn went out (the lead replied): the attempt still counts, on
    -- the plan that exists (none is created for it).
    IF v_sent AND v_plan.lead_id IS NOT NULL THEN
      PERFORM contact_plan_attempted(NEW.lead_id, 'whatsapp', p->'attempt'->>'kind', 'sent',
                                     COALESCE(p->'attempt'->'data', '{}'));
    END IF;
    RETURN NULL;
  END IF;
  IF p ? 'attempt' THEN
    PERFORM contact_plan_attempted(NEW.lead_id, 'whatsapp', p->'attempt'->>'kind',
                                   CASE WHEN v_sent THEN 'sent' ELSE 'skipped' END,
                                   COALESCE(p->'attempt'->'data', '{}')
                                     || CASE WHEN v_sent THEN '{}'::jsonb
                                             ELSE jsonb_build_object('code', split_part(NEW.outcome, ':', 2)) END);
  END IF;
  IF p->>'nudged' = 'true' AND v_sent THEN
    UPDATE contact_plans SET nudged_at = now() WHERE lead_id = NEW.lead_id;
  END IF;
  v_next := p->'next';
  -- A reply turn: the nudge, once per lead; never over a callback the lead asked for in this turn (scheduleCallback).
  IF v_next IS NULL AND p ? 'nudge' AND v_sent AND (v_plan.lead_id IS NULL OR v_plan.nudged_at IS NULL)
     AND NOT (v_plan.next_kind IS NOT DISTINCT FROM 'callback' AND v_plan.ended_at IS NULL) THEN
    v_next := jsonb_build_object('kind', 'nudge', 'afterMs', p->'nudge'->'afterMs', 'at', p->'nudge'->'at',
                                 'reason', p->'nudge'->>'reason', 'data', '{}'::jsonb);
  END IF;
  IF v_next IS NOT NULL AND v_status IN ('new', 'in_conversation') THEN
    -- `at` when the turn fixed it on the engine's clock (from when it was stored), else from now.
    PERFORM contact_plan_schedule(
      NEW.lead_id, v_next->>'kind',
      COALESCE((v_next->>'at')::timestamptz,
               now() + make_interval(secs => (v_next->>'afterMs')::double precision / 1000)),
      v_next->>'reason', COALESCE(v_next->'data', '{}'));
  ELSIF NEW.plan_step IS NOT NULL THEN
    UPDATE contact_plans
       SET next_kind = NULL, next_at = NULL, next_reason = NULL, next_data = '{}', updated_at = now()
     WHERE lead_id = NEW.lead_id;
  END IF;
  UPDATE contact_plans SET in_flight_since = NULL WHERE lead_id = NEW.lead_id AND in_flight_since IS NOT NULL;
  RETURN NULL;
END $$;
