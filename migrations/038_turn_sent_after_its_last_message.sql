-- An agent's answer may go out as several messages (a long answer split at sentence boundaries,
-- docs/WHATSAPP.md, "What is sent"): its turn is sent once its last message is, not its first.
-- migrations/032's whatsapp_record_send, changed in one place: the turn moves `ready` → `sent`
-- only when no other outbound message of the turn is still pending. whatsapp_record_sends (the
-- first contacts taken in batches) is unchanged: a first contact is one message.
CREATE OR REPLACE FUNCTION whatsapp_record_send(
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
  UPDATE agent_turns t SET state = 'sent', updated_at = now()
   WHERE t.id = p_turn_id AND t.state = 'ready'
     AND NOT EXISTS (SELECT 1 FROM whatsapp_messages m
                      WHERE m.lead_id = p_lead_id AND m.turn_id = p_turn_id AND m.direction = 'outbound'
                        AND m.status = 'pending');
  SELECT t.from_status INTO v_moved
    FROM lead_transition(p_lead_id, 'in_conversation', p_from, p_actor, 'message.sent', p_data) t;
  IF v_moved IS NULL THEN
    INSERT INTO lead_events (lead_id, type, data) VALUES (p_lead_id, 'message.sent', p_data);
  END IF;
  FOR e IN WITH taken AS (
             DELETE FROM whatsapp_early_statuses s USING leads l
              WHERE l.id = p_lead_id AND s.provider = p_provider AND s.provider_message_id = p_pmid
                AND s.workspace_id = l.workspace_id AND s.livemode = l.livemode
             RETURNING s.id, s.workspace_id, s.livemode, s.status, s.error_code, s.error_message
           ) SELECT * FROM taken ORDER BY id LOOP
    SELECT s.r_moved_from INTO v_step
      FROM whatsapp_apply_status(e.workspace_id, e.livemode, p_provider, p_pmid, NULL, e.status, e.error_code,
                                 e.error_message, NULL, NULL, false, p_escalate_from) s;
    v_escalated := COALESCE(v_step, v_escalated);
  END LOOP;
  RETURN QUERY SELECT v_moved, v_escalated;
END $$;
