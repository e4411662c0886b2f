-- One implementation of recording accepted sends (docs/WHATSAPP.md, "First contacts in batches").
-- Until now whatsapp_record_sends (migrations/030, 032) recorded a batch by set, and fell back to
-- whatsapp_record_send (migrations/038), once per send, when a batch named one lead, message,
-- turn or provider message twice; the reply turns' sends went through whatsapp_record_send too.
-- Two implementations of one behaviour, which had already drifted apart (038 changed only one).
--
-- Now the set statements are the only path, run once per wave of the batch: a send joins the wave
-- after the last earlier send that names its lead, message, turn or provider message, so within a
-- wave nothing is named twice and each wave sees what the waves before it wrote — what recording
-- the sends one after another wrote. A batch without such repeats (every batch of first contacts)
-- is one wave: one statement per table, as in 030. Statuses held for a wave's sends are applied
-- after that wave, each lead's in the order they arrived. A single send (src/whatsapp/delivery-status.ts,
-- recordAcceptedSend) is a batch of one. The turn moves `ready` → `sent` only once none of its
-- outbound messages is still pending (migrations/038: an answer may go out as several messages).
-- Locks as before, all taken first: the messages' advisory locks by key, then the leads' rows by id.
-- The sends of wave p_wave of a batch (p_waves: each send's wave), each with its place in the batch.
CREATE FUNCTION whatsapp_send_items(p_items jsonb, p_waves int[], p_wave int)
RETURNS TABLE (ord int, lead_id uuid, message_id bigint, turn_id bigint, provider text, pmid text,
               actor text, allowed_from jsonb, data jsonb) LANGUAGE sql IMMUTABLE AS $$
  SELECT e.ord::int, (e.x->>'leadId')::uuid, (e.x->>'messageId')::bigint, (e.x->>'turnId')::bigint,
         e.x->>'provider', e.x->>'providerMessageId', e.x->>'actor', e.x->'from', e.x->'data'
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(x, ord)
   WHERE p_waves[e.ord] = p_wave
$$;

CREATE OR REPLACE FUNCTION whatsapp_record_sends(p_items jsonb, p_escalate_from text[])
RETURNS TABLE (r_ord int, r_moved_from text, r_escalated_from text) LANGUAGE plpgsql AS $$
DECLARE
  it record;
  e record;
  v_n int;
  v_leads uuid[];
  v_messages bigint[];
  v_turns bigint[];
  v_keys text[];
  v_pmids text[];
  v_wave int[];
  v_waves int := 0;
  v_moved text[];
  v_escalated text[];
  v_held jsonb;
  v_send int;
BEGIN
  FOR it IN SELECT DISTINCT hashtext((x->>'provider') || ':' || (x->>'providerMessageId')) AS k
              FROM jsonb_array_elements(p_items) x ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(741322006, it.k);
  END LOOP;
  SELECT count(*)::int, array_agg((x->>'leadId')::uuid ORDER BY ord), array_agg((x->>'messageId')::bigint ORDER BY ord),
         array_agg((x->>'turnId')::bigint ORDER BY ord), array_agg((x->>'provider') || ':' || (x->>'providerMessageId') ORDER BY ord),
         array_agg(x->>'providerMessageId' ORDER BY ord)
    INTO v_n, v_leads, v_messages, v_turns, v_keys, v_pmids
    FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e2(x, ord);
  -- Look-ups by id (= ANY of an array) whatever the table's statistics (migrations/026).
  PERFORM 1 FROM leads l WHERE l.id = ANY (v_leads) ORDER BY l.id FOR UPDATE;

  v_wave := array_fill(1, ARRAY[v_n]);
  FOR v_later IN 1 .. v_n LOOP
    FOR v_earlier IN 1 .. v_later - 1 LOOP
      IF v_leads[v_earlier] = v_leads[v_later] OR v_messages[v_earlier] = v_messages[v_later]
         OR v_turns[v_earlier] = v_turns[v_later] OR v_keys[v_earlier] = v_keys[v_later] THEN
        v_wave[v_later] := greatest(v_wave[v_later], v_wave[v_earlier] + 1);
      END IF;
    END LOOP;
    v_waves := greatest(v_waves, v_wave[v_later]);
  END LOOP;
  v_moved := array_fill(NULL::text, ARRAY[v_n]);
  v_escalated := array_fill(NULL::text, ARRAY[v_n]);

  FOR v_w IN 1 .. v_waves LOOP
    UPDATE whatsapp_messages m SET provider_message_id = COALESCE(m.provider_message_id, i.pmid),
           status = CASE WHEN m.status = 'pending' THEN 'accepted' ELSE m.status END, status_at = now()
      FROM whatsapp_send_items(p_items, v_wave, v_w) i
     WHERE m.id = ANY (v_messages) AND m.id = i.message_id;

    UPDATE agent_turns t SET state = 'sent', updated_at = now()
      FROM whatsapp_send_items(p_items, v_wave, v_w) i
     WHERE t.id = ANY (v_turns) AND t.id = i.turn_id AND t.state = 'ready'
       AND NOT EXISTS (SELECT 1 FROM whatsapp_messages m
                        WHERE m.lead_id = i.lead_id AND m.turn_id = i.turn_id AND m.direction = 'outbound'
                          AND m.status = 'pending');

    -- The leads were locked above, so `prev` reads the status each UPDATE below replaces.
    FOR it IN WITH i AS (SELECT * FROM whatsapp_send_items(p_items, v_wave, v_w)), prev AS (
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
    SELECT mv.ord, mv.from_status FROM moved mv LOOP
      v_moved[it.ord] := it.from_status;
    END LOOP;

    -- The statuses held for the wave's sends, applied in the order they arrived (migrations/044;
    -- not found now, they are not held again).
    WITH taken AS (
      DELETE FROM whatsapp_early_statuses s
       USING whatsapp_send_items(p_items, v_wave, v_w) i, leads l
       WHERE s.provider_message_id = ANY (v_pmids)
         AND s.provider = i.provider AND s.provider_message_id = i.pmid
         AND l.id = ANY (v_leads) AND l.id = i.lead_id
         AND s.workspace_id = l.workspace_id AND s.livemode = l.livemode
      RETURNING i.ord, s.id, s.workspace_id, s.livemode, s.provider, s.provider_message_id, s.status, s.error_code, s.error_message
    )
    SELECT jsonb_agg(jsonb_build_object('send', t.ord, 'workspaceId', t.workspace_id, 'livemode', t.livemode, 'provider', t.provider,
                                        'providerMessageId', t.provider_message_id, 'key', NULL, 'status', t.status,
                                        'errorCode', t.error_code, 'errorMessage', t.error_message, 'hold', false) ORDER BY t.ord, t.id)
      INTO v_held FROM taken t;
    IF v_held IS NOT NULL THEN
      FOR e IN SELECT a.r_ord, a.r_moved_from FROM whatsapp_apply_statuses(v_held, p_escalate_from) a ORDER BY a.r_ord LOOP
        v_send := (v_held->(e.r_ord - 1)->>'send')::int;
        v_escalated[v_send] := COALESCE(e.r_moved_from, v_escalated[v_send]);
      END LOOP;
    END IF;
  END LOOP;

  RETURN QUERY SELECT o, v_moved[o], v_escalated[o] FROM generate_series(1, v_n) o;
END $$;

DROP FUNCTION whatsapp_record_send(text, text, bigint, bigint, uuid, text, text[], jsonb, text[]);
