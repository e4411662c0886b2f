-- WhatsApp follow-ups as agent turns (docs/FOLLOW-UP.md, docs/WHATSAPP.md "Follow-ups"). A plan's
-- follow-up template and its nudge go out as turns of their own kinds, through the same
-- checkpointed send path as every agent message. A turn that is part of the plan carries what its
-- send means for the plan (`plan_on_sent`: the attempt it counts as and the step after it), and the
-- trigger below applies that in the statement that records the send: a worker killed between the
-- provider's answer and the plan's next step cannot lose the step.

ALTER TABLE agent_turns DROP CONSTRAINT agent_turns_kind_check;
ALTER TABLE agent_turns ADD CONSTRAINT agent_turns_kind_check
  CHECK (kind IN ('first_contact', 'reply', 'operator', 'follow_up', 'nudge'));

-- {attempt?: {kind, data}, next?: {kind, afterMs, at?, reason, data}, nudge?: {afterMs, at?, reason}, nudged?: true}
ALTER TABLE agent_turns ADD COLUMN plan_on_sent jsonb;
-- The plan step a follow-up or nudge turn was queued for: one turn per step (a retried attempt
-- finds it instead of queueing a second), and its send moves the plan on only if the plan is
-- still at that step (a reply meanwhile ended it).
ALTER TABLE agent_turns ADD COLUMN plan_step integer;
CREATE UNIQUE INDEX agent_turns_plan_step ON agent_turns (lead_id, plan_step) WHERE plan_step IS NOT NULL;

-- A plan turn was sent (or skipped: the provider's per-user limit, the closed window): the attempt
-- is counted and the next step scheduled. A reply turn sent to a lead who has not been nudged yet
-- schedules the nudge (the lead's next message ends the plan again, so it is replaced by the next
-- reply's).
CREATE FUNCTION contact_plan_turn_done() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  p jsonb := NEW.plan_on_sent;
  v_sent boolean := NEW.state = 'sent';
  v_status text;
  v_plan record;
  v_attempts integer;
  v_next jsonb;
BEGIN
  SELECT status INTO v_status FROM leads WHERE id = NEW.lead_id;
  SELECT * INTO v_plan FROM contact_plans WHERE lead_id = NEW.lead_id FOR UPDATE;
  IF NEW.plan_step IS NOT NULL AND (v_plan.lead_id IS NULL OR v_plan.step <> NEW.plan_step OR v_plan.ended_at IS NOT NULL) THEN
    -- The plan moved on while this turn went out (the lead replied): the attempt still counts.
    IF v_sent AND v_plan.lead_id IS NOT NULL THEN
      UPDATE contact_plans SET attempts = attempts + 1, updated_at = now() WHERE lead_id = NEW.lead_id
      RETURNING attempts INTO v_attempts;
      INSERT INTO lead_events (lead_id, type, data)
      VALUES (NEW.lead_id, 'contact.attempted', COALESCE(p->'attempt'->'data', '{}')
              || jsonb_build_object('channel', 'whatsapp', 'attempt', v_attempts, 'kind', p->'attempt'->>'kind', 'outcome', 'sent'));
    END IF;
    RETURN NULL;
  END IF;
  IF p ? 'attempt' THEN
    INSERT INTO contact_plans AS c (lead_id, workspace_id, channel, attempts)
    SELECT l.id, l.workspace_id, 'whatsapp', 1 FROM leads l WHERE l.id = NEW.lead_id
    ON CONFLICT (lead_id) DO UPDATE SET attempts = c.attempts + 1, updated_at = now()
    RETURNING attempts INTO v_attempts;
    INSERT INTO lead_events (lead_id, type, data)
    VALUES (NEW.lead_id, 'contact.attempted', COALESCE(p->'attempt'->'data', '{}')
            || jsonb_build_object('channel', 'whatsapp', 'attempt', v_attempts, 'kind', p->'attempt'->>'kind',
                                  'outcome', CASE WHEN v_sent THEN 'sent' ELSE 'skipped' END)
            || CASE WHEN v_sent THEN '{}'::jsonb ELSE jsonb_build_object('code', split_part(NEW.outcome, ':', 2)) END);
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
    PERFORM contact_plan_schedule(NEW.lead_id, v_next->>'kind',
                                  COALESCE((v_next->>'at')::timestamptz,
                                           now() + make_interval(secs => (v_next->>'afterMs')::double precision / 1000)),
                                  v_next->>'reason', COALESCE(v_next->'data', '{}'));
  ELSIF NEW.plan_step IS NOT NULL THEN
    UPDATE contact_plans SET next_kind = NULL, next_at = NULL, next_reason = NULL, next_data = '{}', updated_at = now()
     WHERE lead_id = NEW.lead_id;
  END IF;
  UPDATE contact_plans SET in_flight_since = NULL WHERE lead_id = NEW.lead_id AND in_flight_since IS NOT NULL;
  RETURN NULL;
END $$;
CREATE TRIGGER agent_turns_plan_done AFTER UPDATE OF state ON agent_turns FOR EACH ROW
  WHEN (NEW.plan_on_sent IS NOT NULL AND OLD.state IS DISTINCT FROM NEW.state
        AND (NEW.state = 'sent' OR (NEW.state = 'failed' AND NEW.outcome LIKE 'skipped:%')))
  EXECUTE FUNCTION contact_plan_turn_done();

-- A follow-up's own approved template ({contentSid} or {name, language}); null: the workspace's
-- first-contact template.
ALTER TABLE whatsapp_messages ADD COLUMN template_ref jsonb;
