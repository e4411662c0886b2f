-- A WhatsApp send's recording and the providers' delivery statuses, each in one statement
-- (docs/PERFORMANCE.md, "Burst drain"; docs/WHATSAPP.md, "Lock order"). They were transactions of
-- five to seven round trips each, and every one of those round trips held the message's advisory
-- lock and the lead's row while it waited for the Node process: under a burst, the three status
-- callbacks of every first message queued behind each other on those locks for tens of
-- milliseconds. As functions, each statement of theirs still reads what committed before it (a
-- PL/pgSQL statement takes a fresh snapshot), so a status that waited for the send's lock sees
-- the recorded send, as before. The rules that decide (which statuses a lead may leave, who acts)
-- stay in the TypeScript that calls them and arrive as parameters.

-- A lead's status change, exactly as src/leads/lead-state.ts made it until now: the row is locked
-- and its status re-checked in the statement, the timeline entry written with it. transitionLead
-- calls this too, so there is one implementation.
CREATE FUNCTION lead_transition(
  p_lead uuid, p_to text, p_from text[], p_actor text, p_type text, p_data jsonb,
  p_set_notes boolean DEFAULT false, p_notes text DEFAULT NULL,
  p_set_booking boolean DEFAULT false, p_booking_uid text DEFAULT NULL, p_booking_start timestamptz DEFAULT NULL
) RETURNS TABLE (current_status text, from_status text) LANGUAGE sql AS $$
  WITH prev AS (
    SELECT id, status FROM leads WHERE id = p_lead FOR UPDATE
  ), moved AS (
    UPDATE leads l SET status = p_to, updated_at = now(),
           qualification_notes = CASE WHEN p_set_notes THEN p_notes ELSE l.qualification_notes END,
           booking_uid = CASE WHEN p_set_booking THEN p_booking_uid ELSE l.booking_uid END,
           booking_start = CASE WHEN p_set_booking THEN p_booking_start ELSE l.booking_start END
      FROM prev WHERE l.id = prev.id AND prev.status = ANY(p_from)
    RETURNING prev.status AS from_status
  ), event AS (
    INSERT INTO lead_events (lead_id, type, data)
    SELECT p_lead, p_type, p_data || jsonb_build_object('from', from_status, 'to', p_to, 'actor', p_actor) FROM moved
  )
  SELECT (SELECT status FROM prev), (SELECT from_status FROM moved)
$$;

-- Later statuses never move a message back: callbacks arrive out of order and repeat.
CREATE FUNCTION whatsapp_status_rank(s text) RETURNS int LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE s WHEN 'accepted' THEN 1 WHEN 'queued' THEN 1 WHEN 'sent' THEN 2 WHEN 'delivered' THEN 3 WHEN 'read' THEN 4
                WHEN 'failed' THEN 5 WHEN 'undelivered' THEN 5 WHEN 'cancelled' THEN 6 ELSE 0 END
$$;

-- One status of one of our messages; the caller holds the message's advisory lock. The message is
-- found by the provider's id, else by our idempotency key (Twilio's StatusCallback URL carries it:
-- it finds a send whose acceptance a crash kept us from recording). Not found: the provider called
-- back before the send was recorded, and with p_hold the status waits in whatsapp_early_statuses
-- for the recording. A failed delivery of the lead's latest message hands a lead the agent still
-- had to a person (p_escalate_from: the statuses the system may move to needs_human from).
CREATE FUNCTION whatsapp_apply_status(
  p_provider text, p_pmid text, p_key text, p_status text, p_error_code text, p_error_message text,
  p_repaired_type text, p_repaired_data jsonb, p_hold boolean, p_escalate_from text[]
) RETURNS TABLE (r_outcome text, r_lead_id uuid, r_moved_from text) LANGUAGE plpgsql AS $$
DECLARE
  v_id bigint;
  v_lead uuid;
  msg record;
  v_window boolean;
  v_data jsonb;
  v_moved text;
  v_found boolean := false;
BEGIN
  SELECT m.id, m.lead_id INTO v_id, v_lead FROM whatsapp_messages m
   WHERE m.direction = 'outbound' AND ((m.provider = p_provider AND m.provider_message_id = p_pmid) OR m.idempotency_key = p_key)
   ORDER BY (m.provider_message_id = p_pmid) DESC NULLS LAST LIMIT 1;
  IF FOUND THEN
    -- Lock order: the lead's row, then the message's (a message never changes lead).
    PERFORM 1 FROM leads l WHERE l.id = v_lead FOR UPDATE;
    SELECT m.id, m.lead_id, l.status AS lead_status, m.status, m.provider_message_id INTO msg
      FROM whatsapp_messages m JOIN leads l ON l.id = m.lead_id WHERE m.id = v_id FOR UPDATE OF m;
    v_found := FOUND;
  END IF;
  IF NOT v_found THEN
    IF p_hold THEN
      DELETE FROM whatsapp_early_statuses WHERE received_at < now() - interval '1 day';
      INSERT INTO whatsapp_early_statuses (provider, provider_message_id, status, error_code, error_message)
      VALUES (p_provider, p_pmid, p_status, p_error_code, p_error_message);
    END IF;
    RETURN QUERY SELECT 'held'::text, NULL::uuid, NULL::text;
    RETURN;
  END IF;
  IF msg.provider_message_id IS NOT NULL AND msg.provider_message_id <> p_pmid THEN
    -- The same key, another provider message: the crash window sent it twice. Recorded once per copy.
    INSERT INTO lead_events (lead_id, type, data)
    VALUES (msg.lead_id, 'message.duplicate_send', jsonb_build_object('messageId', msg.id, 'status', p_status, 'actor', 'system'));
    RETURN QUERY SELECT 'applied'::text, msg.lead_id, NULL::text;
    RETURN;
  END IF;
  IF whatsapp_status_rank(p_status) <= whatsapp_status_rank(msg.status) THEN
    RETURN QUERY SELECT 'stale'::text, NULL::uuid, NULL::text;
    RETURN;
  END IF;
  UPDATE whatsapp_messages SET status = p_status, provider_message_id = COALESCE(provider_message_id, p_pmid),
         error_code = COALESCE(p_error_code, error_code), error_message = COALESCE(p_error_message, error_message), status_at = now()
   WHERE id = msg.id;
  IF p_status IN ('failed', 'undelivered') THEN
    -- The lead never got our message: a person has to pick the conversation up. Twilio's 63016 and
    -- Meta's 131047 mean the 24-hour window was closed.
    v_window := COALESCE(p_error_code IN ('63016', '131047'), false);
    v_data := jsonb_build_object(
      'reason', CASE WHEN v_window THEN 'The 24-hour WhatsApp window was closed; the message was not delivered.'
                     ELSE 'A WhatsApp message could not be delivered.' END,
      'outcome', CASE WHEN v_window THEN 'window_closed' ELSE 'undelivered' END,
      'messageId', msg.id, 'errorCode', p_error_code);
    -- Only a conversation still in the agent's hands, and only for its latest message (an older
    -- one failing changes less); a booked lead stays booked.
    IF msg.lead_status IN ('new', 'in_conversation') AND NOT EXISTS (
         SELECT 1 FROM whatsapp_messages m WHERE m.lead_id = msg.lead_id AND m.direction = 'outbound' AND m.id > msg.id) THEN
      SELECT t.from_status INTO v_moved FROM lead_transition(msg.lead_id, 'needs_human', p_escalate_from, 'system', 'conversation.escalated', v_data) t;
    END IF;
    IF v_moved IS NULL THEN
      INSERT INTO lead_events (lead_id, type, data) VALUES (msg.lead_id, 'message.failed', v_data || jsonb_build_object('actor', 'system'));
    END IF;
  END IF;
  IF p_repaired_type IS NOT NULL THEN
    INSERT INTO lead_events (lead_id, type, data) VALUES (msg.lead_id, p_repaired_type, p_repaired_data || jsonb_build_object('messageId', msg.id));
  END IF;
  RETURN QUERY SELECT 'applied'::text, msg.lead_id, v_moved;
END $$;

-- Delivery statuses of any messages, as one transaction: the statuses a process received together
-- (src/whatsapp/delivery-status.ts batches them). Every lock is taken up front in one order for all
-- callers — the messages' advisory locks by key, then their leads' rows by id — so two batches, or
-- a batch and a send's recording (message lock, then lead), never wait for each other in a circle.
-- Then the statuses are applied in the order they arrived. Items: {provider, providerMessageId,
-- key, status, errorCode, errorMessage, repairedType, repairedData}; one row out per item.
CREATE FUNCTION whatsapp_apply_statuses(p_items jsonb, p_escalate_from text[])
RETURNS TABLE (r_ord int, r_outcome text, r_lead_id uuid, r_moved_from text) LANGUAGE plpgsql AS $$
DECLARE
  it record;
  v_item jsonb;
  v_lead uuid;
  v_leads uuid[] := '{}';
BEGIN
  FOR it IN SELECT DISTINCT hashtext((x->>'provider') || ':' || (x->>'providerMessageId')) AS k
              FROM jsonb_array_elements(p_items) x ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(741322006, it.k);
  END LOOP;
  -- Each message looked up on its own (a unique index each), not by a join of the items with
  -- the messages: planned on the statistics of a young table, that join read every outbound
  -- message (200 pages a call at 10,000 leads, growing with them).
  FOR v_item IN SELECT x FROM jsonb_array_elements(p_items) x LOOP
    SELECT m.lead_id INTO v_lead FROM whatsapp_messages m
     WHERE m.direction = 'outbound'
       AND ((m.provider = v_item->>'provider' AND m.provider_message_id = v_item->>'providerMessageId') OR m.idempotency_key = v_item->>'key')
     ORDER BY (m.provider_message_id = v_item->>'providerMessageId') DESC NULLS LAST LIMIT 1;
    IF FOUND THEN
      v_leads := v_leads || v_lead;
    END IF;
  END LOOP;
  PERFORM 1 FROM leads l WHERE l.id = ANY(v_leads) ORDER BY l.id FOR UPDATE;
  FOR it IN SELECT e.ord::int AS ord, e.x FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(x, ord) ORDER BY e.ord LOOP
    RETURN QUERY SELECT it.ord, s.r_outcome, s.r_lead_id, s.r_moved_from
      FROM whatsapp_apply_status(it.x->>'provider', it.x->>'providerMessageId', it.x->>'key', it.x->>'status',
                                 it.x->>'errorCode', it.x->>'errorMessage', it.x->>'repairedType', it.x->'repairedData',
                                 true, p_escalate_from) s;
  END LOOP;
END $$;

-- The provider accepted one of our messages: the message and its turn are marked sent, the lead
-- moves into its conversation (p_from: the statuses p_actor may move it from), the timeline says so,
-- and the statuses that arrived before this recording are applied, in order — one transaction
-- under the message's lock, as a status callback takes it. Returns the status the lead moved from
-- (null: it did not move) and, when an early failed status handed it to a person, the status it
-- moved from then.
CREATE FUNCTION whatsapp_record_send(
  p_provider text, p_pmid text, p_message_id bigint, p_turn_id bigint, p_lead_id uuid,
  p_actor text, p_from text[], p_data jsonb, p_escalate_from text[]
) RETURNS TABLE (r_moved_from text, r_escalated_from text) LANGUAGE plpgsql AS $$
DECLARE
  e record;
  v_moved text;
  v_escalated text;
  v_step text;
BEGIN
  PERFORM pg_advisory_xact_lock(741322006, hashtext(p_provider || ':' || p_pmid));
  PERFORM 1 FROM leads WHERE id = p_lead_id FOR UPDATE;
  UPDATE whatsapp_messages SET provider_message_id = COALESCE(provider_message_id, p_pmid),
         status = CASE WHEN status = 'pending' THEN 'accepted' ELSE status END, status_at = now()
   WHERE id = p_message_id;
  UPDATE agent_turns SET state = 'sent', updated_at = now() WHERE id = p_turn_id AND state = 'ready';
  SELECT t.from_status INTO v_moved FROM lead_transition(p_lead_id, 'in_conversation', p_from, p_actor, 'message.sent', p_data) t;
  IF v_moved IS NULL THEN
    INSERT INTO lead_events (lead_id, type, data) VALUES (p_lead_id, 'message.sent', p_data);
  END IF;
  FOR e IN WITH taken AS (
             DELETE FROM whatsapp_early_statuses WHERE provider = p_provider AND provider_message_id = p_pmid
             RETURNING id, status, error_code, error_message
           ) SELECT * FROM taken ORDER BY id LOOP
    SELECT s.r_moved_from INTO v_step
      FROM whatsapp_apply_status(p_provider, p_pmid, NULL, e.status, e.error_code, e.error_message, NULL, NULL, false, p_escalate_from) s;
    v_escalated := COALESCE(v_step, v_escalated);
  END LOOP;
  RETURN QUERY SELECT v_moved, v_escalated;
END $$;
