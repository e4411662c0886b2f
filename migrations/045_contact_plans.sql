-- The contact plan (docs/FOLLOW-UP.md): per lead, the next attempt to reach them (a call again, a
-- follow-up template, a nudge, a callback the lead asked for), scheduled through the job queue and
-- ended — in the transaction of the change that ends it — when the lead replies, books, is
-- unqualified, goes to a person, opts out, is put on the do-not-contact list, or the workspace's
-- agent is switched off. And the workspace's do-not-contact list.

-- A job may wait: the relay hands `start_after` to pg-boss (a plan's next attempt).
ALTER TABLE outbox ADD COLUMN start_after timestamptz;

CREATE TABLE contact_plans (
  lead_id uuid PRIMARY KEY REFERENCES leads (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  channel text NOT NULL CHECK (channel IN ('voice', 'whatsapp')),
  -- Attempts made so far, the first contact included.
  attempts integer NOT NULL DEFAULT 0,
  -- Bumped by every schedule and every end: a job carries the step it was queued for and does
  -- nothing when the plan has moved on (a cancelled or superseded attempt).
  step integer NOT NULL DEFAULT 0,
  next_kind text CHECK (next_kind IN ('call', 'template', 'nudge', 'callback', 'give_up')),
  next_at timestamptz,
  next_reason text,
  -- Data of the next step (which follow-up, the lead's words for a callback).
  next_data jsonb NOT NULL DEFAULT '{}',
  -- An attempt taken by a worker and not yet recorded (a call placed, a template being sent).
  in_flight_since timestamptz,
  ended_at timestamptz,
  ended_reason text,
  voicemail_left_at timestamptz,
  nudged_at timestamptz,
  reached_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((next_kind IS NULL) = (next_at IS NULL))
);
CREATE INDEX contact_plans_next ON contact_plans (workspace_id, next_at) WHERE next_at IS NOT NULL;

-- Numbers nobody in the workspace calls or messages again (E.164, as leads.phone_normalized).
CREATE TABLE suppressed_numbers (
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  phone_e164 text NOT NULL,
  source text NOT NULL CHECK (source IN ('opt_out', 'operator', 'api')),
  note text,
  operator_id uuid,
  lead_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, phone_e164)
);

-- When a lead was first reached (answered a call, replied) and on which attempt: analytics.
ALTER TABLE lead_funnel ADD COLUMN reached_at timestamptz, ADD COLUMN reached_attempt integer;

-- Ends the lead's plan if it is running: the pending attempt is cancelled (its job finds the step
-- moved on) and the timeline says why.
CREATE FUNCTION contact_plan_end(p_lead uuid, p_reason text) RETURNS boolean LANGUAGE sql AS $$
  WITH old AS (
    SELECT lead_id, next_kind, next_at FROM contact_plans WHERE lead_id = p_lead AND ended_at IS NULL FOR UPDATE
  ), ended AS (
    UPDATE contact_plans p
       SET ended_at = now(), ended_reason = p_reason, next_kind = NULL, next_at = NULL, next_reason = NULL,
           next_data = '{}', step = p.step + 1, updated_at = now()
      FROM old WHERE p.lead_id = old.lead_id
    RETURNING p.lead_id, p.attempts, old.next_kind, old.next_at
  ), event AS (
    INSERT INTO lead_events (lead_id, type, data)
    SELECT lead_id, 'contact.plan_ended',
           jsonb_build_object('reason', p_reason, 'attempts', attempts)
             || CASE WHEN next_kind IS NULL THEN '{}'::jsonb
                     ELSE jsonb_build_object('cancelled', jsonb_build_object('kind', next_kind, 'at', next_at)) END
      FROM ended
  )
  SELECT EXISTS (SELECT 1 FROM ended)
$$;

-- Schedules the lead's next attempt (creating its plan): the step moves on, the timeline gets
-- `contact.scheduled`, and the job is queued in the same transaction (the outbox).
CREATE FUNCTION contact_plan_schedule(p_lead uuid, p_kind text, p_at timestamptz, p_reason text, p_data jsonb)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_step integer;
BEGIN
  INSERT INTO contact_plans AS p (lead_id, workspace_id, channel, next_kind, next_at, next_reason, next_data, step)
  SELECT l.id, l.workspace_id, w.channel, p_kind, p_at, p_reason, p_data, 1
    FROM leads l JOIN workspaces w ON w.id = l.workspace_id WHERE l.id = p_lead
  ON CONFLICT (lead_id) DO UPDATE
     SET next_kind = p_kind, next_at = p_at, next_reason = p_reason, next_data = p_data, step = p.step + 1,
         in_flight_since = NULL, ended_at = NULL, ended_reason = NULL, updated_at = now()
  RETURNING step INTO v_step;
  IF v_step IS NULL THEN
    RETURN NULL; -- the lead is gone
  END IF;
  INSERT INTO lead_events (lead_id, type, data)
  VALUES (p_lead, 'contact.scheduled',
          jsonb_build_object('kind', p_kind, 'at', p_at, 'reason', p_reason, 'step', v_step) || p_data);
  INSERT INTO outbox (queue, payload, start_after)
  VALUES ('contact-attempt', jsonb_build_object('leadId', p_lead, 'step', v_step), p_at);
  RETURN v_step;
END $$;

-- A lead that books, is unqualified or goes to a person (agent, operator or system) ends its plan.
CREATE FUNCTION contact_plan_on_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM contact_plan_end(NEW.id, NEW.status);
  RETURN NULL;
END $$;
CREATE TRIGGER leads_end_contact_plan AFTER UPDATE OF status ON leads FOR EACH ROW
  WHEN (NEW.status IN ('booked', 'unqualified', 'needs_human') AND OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION contact_plan_on_status();

-- A lead's message ends the plan (reached) and is remembered as the moment they were reached.
CREATE FUNCTION contact_plan_on_inbound() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_attempts integer;
BEGIN
  UPDATE contact_plans SET reached_at = now() WHERE lead_id = NEW.lead_id AND reached_at IS NULL
  RETURNING attempts INTO v_attempts;
  IF FOUND THEN
    INSERT INTO lead_events (lead_id, type, data)
    VALUES (NEW.lead_id, 'contact.reached', jsonb_build_object('channel', 'whatsapp', 'attempt', greatest(v_attempts, 1)));
  END IF;
  PERFORM contact_plan_end(NEW.lead_id, 'replied');
  RETURN NULL;
END $$;
CREATE TRIGGER whatsapp_inbound_ends_contact_plan AFTER INSERT ON whatsapp_messages FOR EACH ROW
  WHEN (NEW.direction = 'inbound') EXECUTE FUNCTION contact_plan_on_inbound();

-- The kill switch: every running plan of the workspace ends (its timeline says so). The leads keep
-- their status: switching the agent off is the operators taking the workspace over, and a lead who
-- writes meanwhile goes to a person with the holding message (docs/WHATSAPP.md).
CREATE FUNCTION contact_plan_on_agent_off() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_lead uuid;
BEGIN
  FOR v_lead IN SELECT lead_id FROM contact_plans WHERE workspace_id = NEW.id AND ended_at IS NULL ORDER BY lead_id LOOP
    PERFORM contact_plan_end(v_lead, 'agent_off');
  END LOOP;
  RETURN NULL;
END $$;
CREATE TRIGGER workspaces_agent_off_ends_contact_plans AFTER UPDATE OF agent_enabled ON workspaces FOR EACH ROW
  WHEN (OLD.agent_enabled AND NOT NEW.agent_enabled) EXECUTE FUNCTION contact_plan_on_agent_off();

-- An opt-out on either channel puts the number on the workspace's do-not-contact list.
CREATE FUNCTION suppress_on_opt_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO suppressed_numbers (workspace_id, phone_e164, source, lead_id)
  VALUES (NEW.workspace_id, NEW.phone_normalized, 'opt_out', NEW.id)
  ON CONFLICT (workspace_id, phone_e164) DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER leads_opt_out_suppresses AFTER UPDATE OF opted_out_at ON leads FOR EACH ROW
  WHEN (OLD.opted_out_at IS NULL AND NEW.opted_out_at IS NOT NULL) EXECUTE FUNCTION suppress_on_opt_out();

-- A number put on the list ends the plans of the workspace's leads with that number.
CREATE FUNCTION contact_plan_on_suppressed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_lead uuid;
BEGIN
  FOR v_lead IN SELECT p.lead_id FROM contact_plans p JOIN leads l ON l.id = p.lead_id
                 WHERE l.workspace_id = NEW.workspace_id AND l.phone_normalized = NEW.phone_e164
                   AND p.ended_at IS NULL ORDER BY p.lead_id LOOP
    PERFORM contact_plan_end(v_lead, 'do_not_contact');
  END LOOP;
  RETURN NULL;
END $$;
CREATE TRIGGER suppressed_numbers_end_contact_plans AFTER INSERT ON suppressed_numbers FOR EACH ROW
  EXECUTE FUNCTION contact_plan_on_suppressed();

-- Analytics: the first `contact.reached` of a lead (the earliest wins, as for the other moments).
CREATE FUNCTION lead_funnel_reached() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE lead_funnel f SET reached_at = r.at, reached_attempt = r.attempt
    FROM (SELECT DISTINCT ON (lead_id) lead_id, at, (data->>'attempt')::int AS attempt
            FROM new_rows WHERE type = 'contact.reached' ORDER BY lead_id, id) r
   WHERE f.lead_id = r.lead_id AND (f.reached_at IS NULL OR r.at < f.reached_at);
  RETURN NULL;
END $$;
CREATE TRIGGER lead_funnel_reached_insert AFTER INSERT ON lead_events REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_funnel_reached();

-- Outbound webhooks: `contact.attempted` and `contact.plan_ended` (migration 027's capture, two
-- event types more).
CREATE OR REPLACE FUNCTION webhook_capture_lead_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  e record;
BEGIN
  FOR e IN SELECT n.lead_id, n.type, n.data, n.at
             FROM new_rows n JOIN leads l ON l.id = n.lead_id
            WHERE EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.workspace_id = l.workspace_id AND w.enabled)
            ORDER BY n.id LOOP
    IF e.type = 'lead.created' THEN
      PERFORM webhook_emit(e.lead_id, 'lead.created', e.data, e.at);
    END IF;
    -- What happened first, then the status change it caused (a first message sent starts the
    -- conversation; a cancellation sends the lead to a person).
    IF e.type IN ('message.received', 'message.sent') THEN
      PERFORM webhook_emit(e.lead_id, e.type, e.data || jsonb_build_object('message',
        (SELECT to_jsonb(m) FROM whatsapp_messages m WHERE m.id = (e.data->>'messageId')::bigint)), e.at);
    END IF;
    IF e.type IN ('booking.rescheduled', 'booking.cancelled') THEN
      PERFORM webhook_emit(e.lead_id, 'lead.booking_changed', e.data, e.at);
    END IF;
    IF e.type IN ('contact.attempted', 'contact.plan_ended') THEN
      PERFORM webhook_emit(e.lead_id, e.type, e.data, e.at);
    END IF;
    IF e.data ? 'from' AND e.data ? 'to' AND e.data->>'from' IS DISTINCT FROM e.data->>'to' THEN
      PERFORM webhook_emit(e.lead_id, 'lead.status_changed', e.data, e.at);
    END IF;
  END LOOP;
  RETURN NULL;
END;
$$;
