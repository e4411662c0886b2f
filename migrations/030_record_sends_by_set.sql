-- whatsapp_record_sends (migrations 025, 026) recorded a batch of first contacts' sends by calling
-- whatsapp_record_send once per send: per lead, an UPDATE of its message, of its turn, of the lead
-- and an INSERT into its timeline, each a statement of its own — so the statement-level triggers
-- of leads and lead_events (the funnel's, the live pages', the outbound webhooks' capture) ran
-- once per lead, each with its transition tables. In a 10,000-lead burst that recording was 44 %
-- of PostgreSQL's time (pg_stat_statements; docs/PERFORMANCE.md, "First sends and delivery statuses by set").
-- Now a batch is recorded by one statement per table for all its sends, so each trigger runs once
-- per batch. What is written is the same, row for row (test/record-sends.test.ts compares it with
-- whatsapp_record_send's): the same locks, taken first in the same order; a lead moves into its
-- conversation only from a status its item allows, with the same timeline entry; a message
-- already past `pending` keeps its status; statuses held for a send (whatsapp_early_statuses) are
-- applied after every send of the batch is recorded, each lead's in the order they arrived.
--
-- A batch that names one lead, message, turn or provider message twice is recorded send by send
-- as before: there the second send must see what the first wrote, which one statement cannot.
CREATE OR REPLACE FUNCTION whatsapp_record_sends(p_items jsonb, p_escalate_from text[])
RETURNS TABLE (r_ord int, r_moved_from text, r_escalated_from text) LANGUAGE plpgsql AS $$
DECLARE
  it record;
  e record;
  v_n int;
  v_leads uuid[];
  v_messages bigint[];
  v_turns bigint[];
  v_pmids text[];
  v_twice boolean;
  v_moved text[];
  v_escalated text[];
  v_step text;
BEGIN
  FOR it IN SELECT DISTINCT hashtext((x->>'provider') || ':' || (x->>'providerMessageId')) AS k
              FROM jsonb_array_elements(p_items) x ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(741322006, it.k);
  END LOOP;
  SELECT count(*)::int, array_agg((x->>'leadId')::uuid), array_agg((x->>'messageId')::bigint),
         array_agg((x->>'turnId')::bigint), array_agg(x->>'providerMessageId'),
         count(DISTINCT x->>'leadId') < count(*) OR count(DISTINCT x->>'messageId') < count(*)
           OR count(DISTINCT x->>'turnId') < count(*)
           OR count(DISTINCT (x->>'provider') || ':' || (x->>'providerMessageId')) < count(*)
    INTO v_n, v_leads, v_messages, v_turns, v_pmids, v_twice
    FROM jsonb_array_elements(p_items) x;
  -- Look-ups by id (= ANY of an array) whatever the table's statistics (migrations/026).
  PERFORM 1 FROM leads l WHERE l.id = ANY (v_leads) ORDER BY l.id FOR UPDATE;

  IF v_twice THEN
    FOR it IN SELECT e2.ord::int AS ord, e2.x FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e2(x, ord) ORDER BY e2.ord LOOP
      RETURN QUERY SELECT it.ord, s.r_moved_from, s.r_escalated_from
        FROM whatsapp_record_send(
               it.x->>'provider', it.x->>'providerMessageId', (it.x->>'messageId')::bigint, (it.x->>'turnId')::bigint,
               (it.x->>'leadId')::uuid, it.x->>'actor', ARRAY(SELECT jsonb_array_elements_text(it.x->'from')), it.x->'data', p_escalate_from) s;
    END LOOP;
    RETURN;
  END IF;

  UPDATE whatsapp_messages m SET provider_message_id = COALESCE(m.provider_message_id, i.x->>'providerMessageId'),
         status = CASE WHEN m.status = 'pending' THEN 'accepted' ELSE m.status END, status_at = now()
    FROM jsonb_array_elements(p_items) i(x)
   WHERE m.id = ANY (v_messages) AND m.id = (i.x->>'messageId')::bigint;

  UPDATE agent_turns SET state = 'sent', updated_at = now() WHERE id = ANY (v_turns) AND state = 'ready';

  -- The leads were locked above, so `prev` reads the status each UPDATE below replaces.
  WITH i AS (
    SELECT e2.ord::int AS ord, (e2.x->>'leadId')::uuid AS lead_id, e2.x->>'actor' AS actor,
           e2.x->'from' AS allowed_from, e2.x->'data' AS data
      FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e2(x, ord)
  ), prev AS (
    SELECT l.id, l.status FROM leads l WHERE l.id = ANY (v_leads)
  ), moved AS (
    UPDATE leads l SET status = 'in_conversation', updated_at = now()
      FROM i JOIN prev p ON p.id = i.lead_id
     WHERE l.id = ANY (v_leads) AND l.id = i.lead_id AND i.allowed_from ? p.status
    RETURNING i.ord, p.status AS from_status
  ), event AS (
    INSERT INTO lead_events (lead_id, type, data)
    SELECT i.lead_id, 'message.sent',
           CASE WHEN mv.from_status IS NULL THEN i.data
                ELSE i.data || jsonb_build_object('from', mv.from_status, 'to', 'in_conversation', 'actor', i.actor) END
      FROM i LEFT JOIN moved mv ON mv.ord = i.ord
     ORDER BY i.ord
  )
  SELECT array_agg(mv.from_status ORDER BY i.ord) INTO v_moved FROM i LEFT JOIN moved mv ON mv.ord = i.ord;

  v_escalated := array_fill(NULL::text, ARRAY[v_n]);
  FOR e IN WITH taken AS (
             DELETE FROM whatsapp_early_statuses s
              USING jsonb_array_elements(p_items) WITH ORDINALITY AS i(x, ord)
              WHERE s.provider_message_id = ANY (v_pmids)
                AND s.provider = i.x->>'provider' AND s.provider_message_id = i.x->>'providerMessageId'
             RETURNING i.ord::int AS ord, s.id, s.provider, s.provider_message_id, s.status, s.error_code, s.error_message
           ) SELECT * FROM taken ORDER BY ord, id LOOP
    SELECT s.r_moved_from INTO v_step
      FROM whatsapp_apply_status(e.provider, e.provider_message_id, NULL, e.status, e.error_code, e.error_message, NULL, NULL, false, p_escalate_from) s;
    v_escalated[e.ord] := COALESCE(v_step, v_escalated[e.ord]);
  END LOOP;

  RETURN QUERY SELECT o, v_moved[o], v_escalated[o] FROM generate_series(1, v_n) o;
END $$;
