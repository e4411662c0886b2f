-- The providers' "not now" arriving later, as a delivery status (docs/FOLLOW-UP.md): Meta reports its
-- per-user marketing limit (131049) and Twilio 63049 and a closed window (63016, Meta 131047) as a
-- failed status after accepting the message. For a message of the contact plan (a per-user limit
-- on the first contact, a follow-up or the nudge; a closed window on a follow-up or the nudge) that is a skipped step — the plan scheduled its next one when
-- the message was accepted — not a reason to hand the lead to a person; other messages are handed
-- over as before. migrations/044's function with that one condition more (and the reason's words).

CREATE OR REPLACE FUNCTION whatsapp_apply_statuses(p_items jsonb, p_escalate_from text[])
RETURNS TABLE (r_ord int, r_outcome text, r_lead_id uuid, r_moved_from text) LANGUAGE plpgsql AS $$
DECLARE
  it record;
  m record;
  v_item jsonb;
  v_o int;
  v_n int := jsonb_array_length(p_items);
  v_outcome text[] := array_fill(NULL::text, ARRAY[v_n]);
  v_lead uuid[] := array_fill(NULL::uuid, ARRAY[v_n]);
  v_moved text[] := array_fill(NULL::text, ARRAY[v_n]);
  v_msg bigint[] := array_fill(NULL::bigint, ARRAY[v_n]);
  v_mlead uuid[] := array_fill(NULL::uuid, ARRAY[v_n]);
  -- What each status of the wave writes: 'hold', 'duplicate', 'update'.
  v_does text[];
  v_take int[];
  v_leads uuid[] := '{}';
  v_id bigint;
  v_found uuid;
BEGIN
  FOR it IN SELECT DISTINCT hashtext((y->>'provider') || ':' || (y->>'providerMessageId')) AS k
              FROM jsonb_array_elements(p_items) y ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(741322006, it.k);
  END LOOP;
  FOR v_o IN 1 .. v_n LOOP
    SELECT s.r_id, s.r_lead_id INTO v_id, v_found FROM whatsapp_status_message(p_items->(v_o - 1)) s;
    v_msg[v_o] := v_id;
    v_mlead[v_o] := v_found;
    IF v_found IS NOT NULL THEN v_leads := v_leads || v_found; END IF;
  END LOOP;
  PERFORM 1 FROM leads l WHERE l.id = ANY (v_leads) ORDER BY l.id FOR UPDATE;

  LOOP
    -- The wave: waiting statuses that no earlier waiting status shares a message, lead, provider id or key with.
    WITH waiting AS (
      SELECT e.ord::int AS ord, v_msg[e.ord] AS msg, v_mlead[e.ord] AS lead,
             (e.x->>'provider') || ':' || (e.x->>'providerMessageId') AS pid, e.x->>'key' AS key
        FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(x, ord)
       WHERE v_outcome[e.ord] IS NULL
    )
    SELECT array_agg(j.ord ORDER BY j.ord) INTO v_take FROM waiting j
     WHERE NOT EXISTS (SELECT 1 FROM waiting i
                        WHERE i.ord < j.ord AND (i.msg = j.msg OR i.lead = j.lead OR i.pid = j.pid OR i.key = j.key));
    EXIT WHEN v_take IS NULL;
    v_does := array_fill(NULL::text, ARRAY[v_n]);

    FOREACH v_o IN ARRAY v_take LOOP
      v_item := p_items->(v_o - 1);
      IF v_msg[v_o] IS NULL THEN
        IF v_item->>'key' IS NOT NULL THEN
          v_outcome[v_o] := 'unknown';
        ELSE
          v_outcome[v_o] := 'held';
          IF COALESCE((v_item->>'hold')::boolean, true) THEN v_does[v_o] := 'hold'; END IF;
        END IF;
        CONTINUE;
      END IF;
      -- Lock order: the lead's row (locked above), then the message's.
      SELECT msg.status, msg.provider_message_id, l.status AS lead_status,
             (SELECT t.kind FROM agent_turns t WHERE t.id = msg.turn_id) AS turn_kind INTO m
        FROM whatsapp_messages msg JOIN leads l ON l.id = msg.lead_id WHERE msg.id = v_msg[v_o] FOR UPDATE OF msg;
      IF m.provider_message_id IS NOT NULL AND m.provider_message_id <> v_item->>'providerMessageId' THEN
        -- The same key, another provider message: the crash window sent it twice. Recorded once per copy.
        v_outcome[v_o] := 'applied';
        v_lead[v_o] := v_mlead[v_o];
        v_does[v_o] := 'duplicate';
      ELSIF m.provider_message_id IS NULL AND EXISTS (
              SELECT 1 FROM whatsapp_messages w WHERE w.provider = v_item->>'provider' AND w.provider_message_id = v_item->>'providerMessageId') THEN
        -- Another message (of another workspace or mode: ours would have been found first) has this id.
        v_outcome[v_o] := 'unknown';
      ELSIF whatsapp_status_rank(v_item->>'status') <= whatsapp_status_rank(m.status) THEN
        v_outcome[v_o] := 'stale';
      ELSE
        v_outcome[v_o] := 'applied';
        v_lead[v_o] := v_mlead[v_o];
        v_does[v_o] := 'update';
        -- A failure hands the lead to a person: only a conversation still in the agent's hands, and
        -- only for its latest message (an older one failing changes less); a booked lead stays booked.
        IF v_item->>'status' IN ('failed', 'undelivered') AND m.lead_status IN ('new', 'in_conversation')
           AND m.lead_status = ANY (p_escalate_from)
           -- A template of the contact plan that the provider's "not now" stopped (a per-user limit, a
           -- closed window): the plan already holds its next step, so the lead stays with the agent.
           AND NOT ((COALESCE(v_item->>'errorCode', '') IN ('131049', '63049') AND m.turn_kind IN ('first_contact', 'follow_up', 'nudge'))
                    OR (COALESCE(v_item->>'errorCode', '') IN ('131047', '63016') AND m.turn_kind IN ('follow_up', 'nudge')))
           AND NOT EXISTS (SELECT 1 FROM whatsapp_messages w
                            WHERE w.lead_id = v_mlead[v_o] AND w.direction = 'outbound' AND w.id > v_msg[v_o]) THEN
          v_moved[v_o] := m.lead_status;
        END IF;
      END IF;
    END LOOP;

    IF 'hold' = ANY (v_does) THEN
      DELETE FROM whatsapp_early_statuses WHERE received_at < now() - interval '1 day';
      INSERT INTO whatsapp_early_statuses (workspace_id, livemode, provider, provider_message_id, status, error_code, error_message)
      SELECT (x->>'workspaceId')::uuid, (x->>'livemode')::boolean, x->>'provider', x->>'providerMessageId', x->>'status',
             x->>'errorCode', x->>'errorMessage'
        FROM unnest(v_take) t(o), LATERAL (SELECT p_items->(t.o - 1) AS x) i
       WHERE v_does[t.o] = 'hold' ORDER BY t.o;
    END IF;

    IF 'update' = ANY (v_does) THEN
      UPDATE whatsapp_messages w SET status = i.x->>'status', provider_message_id = COALESCE(w.provider_message_id, i.x->>'providerMessageId'),
             error_code = COALESCE(i.x->>'errorCode', w.error_code), error_message = COALESCE(i.x->>'errorMessage', w.error_message),
             status_at = now()
        FROM unnest(v_take) t(o), LATERAL (SELECT p_items->(t.o - 1) AS x) i
       WHERE v_does[t.o] = 'update' AND w.id = v_msg[t.o];
    END IF;

    IF EXISTS (SELECT 1 FROM unnest(v_take) t(o) WHERE v_moved[t.o] IS NOT NULL) THEN
      UPDATE leads l SET status = 'needs_human', updated_at = now()
        FROM unnest(v_take) t(o)
       WHERE v_moved[t.o] IS NOT NULL AND l.id = v_mlead[t.o];
    END IF;

    -- The wave's timeline, in the statuses' order; for one status, its failure before its repair.
    IF EXISTS (SELECT 1 FROM unnest(v_take) t(o)
                WHERE v_does[t.o] = 'duplicate'
                   OR (v_does[t.o] = 'update' AND (p_items->(t.o - 1)->>'status' IN ('failed', 'undelivered')
                                                    OR p_items->(t.o - 1)->>'repairedType' IS NOT NULL))) THEN
      INSERT INTO lead_events (lead_id, type, data)
      SELECT ev.lead_id, ev.type, ev.data FROM (
        SELECT t.o, 1 AS part, v_mlead[t.o] AS lead_id, 'message.duplicate_send' AS type,
               jsonb_build_object('messageId', v_msg[t.o], 'status', x->>'status', 'actor', 'system') AS data
          FROM unnest(v_take) t(o), LATERAL (SELECT p_items->(t.o - 1) AS x) i WHERE v_does[t.o] = 'duplicate'
        UNION ALL
        SELECT t.o, 1, v_mlead[t.o],
               CASE WHEN v_moved[t.o] IS NULL THEN 'message.failed' ELSE 'conversation.escalated' END,
               f.data || CASE WHEN v_moved[t.o] IS NULL THEN jsonb_build_object('actor', 'system')
                              ELSE jsonb_build_object('from', v_moved[t.o], 'to', 'needs_human', 'actor', 'system') END
          FROM unnest(v_take) t(o), LATERAL (SELECT p_items->(t.o - 1) AS x) i,
               LATERAL (SELECT COALESCE(x->>'errorCode' IN ('63016', '131047'), false) AS closed,
                               COALESCE(x->>'errorCode' IN ('131049', '63049'), false) AS limited) w,
               -- Twilio's 63016 and Meta's 131047 mean the 24-hour window was closed; Meta's 131049 and
               -- Twilio's 63049, the per-user limit on business-initiated messages.
               LATERAL (SELECT jsonb_build_object(
                 'reason', CASE WHEN w.closed THEN 'The 24-hour WhatsApp window was closed; the message was not delivered.'
                                WHEN w.limited THEN 'The provider held the message back (its per-user limit); the follow-ups go on.'
                                ELSE 'A WhatsApp message could not be delivered.' END,
                 'outcome', CASE WHEN w.closed THEN 'window_closed' WHEN w.limited THEN 'limit_reached' ELSE 'undelivered' END,
                 'messageId', v_msg[t.o], 'errorCode', x->>'errorCode') AS data) f
         WHERE v_does[t.o] = 'update' AND x->>'status' IN ('failed', 'undelivered')
        UNION ALL
        SELECT t.o, 2, v_mlead[t.o], x->>'repairedType', (x->'repairedData') || jsonb_build_object('messageId', v_msg[t.o])
          FROM unnest(v_take) t(o), LATERAL (SELECT p_items->(t.o - 1) AS x) i
         WHERE v_does[t.o] = 'update' AND x->>'repairedType' IS NOT NULL
      ) ev ORDER BY ev.o, ev.part;
    END IF;

    -- What this wave wrote may change what the next one finds (a provider id recorded by our key).
    FOR v_o IN SELECT ord::int FROM generate_series(1, v_n) ord WHERE v_outcome[ord] IS NULL LOOP
      SELECT s.r_id, s.r_lead_id INTO v_id, v_found FROM whatsapp_status_message(p_items->(v_o - 1)) s;
      v_msg[v_o] := v_id;
      v_mlead[v_o] := v_found;
      PERFORM 1 FROM leads l WHERE l.id = v_found FOR UPDATE;
    END LOOP;
  END LOOP;
  RETURN QUERY SELECT g, v_outcome[g], v_lead[g], v_moved[g] FROM generate_series(1, v_n) g;
END $$;
