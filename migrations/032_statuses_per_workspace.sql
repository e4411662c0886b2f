-- A delivery status applies only to a message of the workspace, and of the mode (live or
-- sandbox), whose provider signature it carries. Until now a status found its message by provider
-- id or by our idempotency key in every workspace, and the keys were `turn-<id>`, one sequence for
-- the whole installation: a workspace's admin, who chooses the workspace's own Twilio auth token,
-- could sign a status callback naming the next key and mark another workspace's message failed,
-- handing that lead to a person.
--
-- Now:
-- - every look-up of a status joins the message's lead and requires the workspace and mode the
--   status was received for (the items of whatsapp_apply_statuses carry them);
-- - a status held for a send not recorded yet (whatsapp_early_statuses) keeps its workspace and
--   mode, and the recording of a send takes only those of its own lead's workspace and mode;
-- - a status that names one of our keys but no message of the workspace is `unknown`, not held:
--   the key is stored with its message before the send, so a genuine status always finds it;
-- - new messages get a random key (whatsapp_outbound_key: 122 random bits); existing messages
--   keep theirs, now reachable only from their own workspace;
-- - a status records its provider id on a message that has none yet (a send whose acceptance a
--   crash kept us from recording), never over one already recorded (that is a duplicate send,
--   as before), and never one that another message already has (then the status is unknown).
--
-- Statuses held before this migration do not say whose they are: they are dropped (a held status
-- is at most seconds old in normal operation; the provider's later statuses still arrive).

CREATE FUNCTION whatsapp_outbound_key() RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT 'wa-' || replace(gen_random_uuid()::text, '-', '')
$$;

LOCK TABLE whatsapp_early_statuses IN ACCESS EXCLUSIVE MODE;
DELETE FROM whatsapp_early_statuses;
ALTER TABLE whatsapp_early_statuses ADD COLUMN workspace_id uuid NOT NULL, ADD COLUMN livemode boolean NOT NULL;

-- The functions that call whatsapp_apply_status are all replaced below.
DROP FUNCTION whatsapp_apply_status(text, text, text, text, text, text, text, jsonb, boolean, text[]);

-- One status of one of our messages in workspace p_workspace and mode p_livemode (migrations/022
-- for the rest); the caller holds the message's advisory lock.
CREATE FUNCTION whatsapp_apply_status(
  p_workspace uuid, p_livemode boolean,
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
  -- The workspace is checked on the (at most two) messages the unique indexes find, by a
  -- subquery the planner cannot turn into a scan of the workspace's leads.
  SELECT m.id, m.lead_id INTO v_id, v_lead FROM whatsapp_messages m
   WHERE m.direction = 'outbound'
     AND ((m.provider = p_provider AND m.provider_message_id = p_pmid)
          OR (m.idempotency_key = p_key AND m.provider = p_provider))
     AND (SELECT l.workspace_id = p_workspace AND l.livemode = p_livemode FROM leads l WHERE l.id = m.lead_id)
   ORDER BY (m.provider_message_id = p_pmid) DESC NULLS LAST LIMIT 1;
  IF FOUND THEN
    -- Lock order: the lead's row, then the message's (a message never changes lead).
    PERFORM 1 FROM leads l WHERE l.id = v_lead FOR UPDATE;
    SELECT m.id, m.lead_id, l.status AS lead_status, m.status, m.provider_message_id INTO msg
      FROM whatsapp_messages m JOIN leads l ON l.id = m.lead_id WHERE m.id = v_id FOR UPDATE OF m;
    v_found := FOUND;
  END IF;
  IF NOT v_found THEN
    IF p_key IS NOT NULL THEN
      RETURN QUERY SELECT 'unknown'::text, NULL::uuid, NULL::text;
      RETURN;
    END IF;
    IF p_hold THEN
      DELETE FROM whatsapp_early_statuses WHERE received_at < now() - interval '1 day';
      INSERT INTO whatsapp_early_statuses
             (workspace_id, livemode, provider, provider_message_id, status, error_code, error_message)
      VALUES (p_workspace, p_livemode, p_provider, p_pmid, p_status, p_error_code, p_error_message);
    END IF;
    RETURN QUERY SELECT 'held'::text, NULL::uuid, NULL::text;
    RETURN;
  END IF;
  IF msg.provider_message_id IS NOT NULL AND msg.provider_message_id <> p_pmid THEN
    -- The same key, another provider message: the crash window sent it twice. Recorded once per copy.
    INSERT INTO lead_events (lead_id, type, data)
    VALUES (msg.lead_id, 'message.duplicate_send',
            jsonb_build_object('messageId', msg.id, 'status', p_status, 'actor', 'system'));
    RETURN QUERY SELECT 'applied'::text, msg.lead_id, NULL::text;
    RETURN;
  END IF;
  IF msg.provider_message_id IS NULL
     AND EXISTS (SELECT 1 FROM whatsapp_messages o
                  WHERE o.provider = p_provider AND o.provider_message_id = p_pmid) THEN
    -- Another message (of another workspace or mode: ours would have been found first) has this id.
    RETURN QUERY SELECT 'unknown'::text, NULL::uuid, NULL::text;
    RETURN;
  END IF;
  IF whatsapp_status_rank(p_status) <= whatsapp_status_rank(msg.status) THEN
    RETURN QUERY SELECT 'stale'::text, NULL::uuid, NULL::text;
    RETURN;
  END IF;
  UPDATE whatsapp_messages SET status = p_status, provider_message_id = COALESCE(provider_message_id, p_pmid),
         error_code = COALESCE(p_error_code, error_code), error_message = COALESCE(p_error_message, error_message),
         status_at = now()
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
         SELECT 1 FROM whatsapp_messages m
          WHERE m.lead_id = msg.lead_id AND m.direction = 'outbound' AND m.id > msg.id) THEN
      SELECT t.from_status INTO v_moved
        FROM lead_transition(msg.lead_id, 'needs_human', p_escalate_from, 'system', 'conversation.escalated', v_data) t;
    END IF;
    IF v_moved IS NULL THEN
      INSERT INTO lead_events (lead_id, type, data)
      VALUES (msg.lead_id, 'message.failed', v_data || jsonb_build_object('actor', 'system'));
    END IF;
  END IF;
  IF p_repaired_type IS NOT NULL THEN
    INSERT INTO lead_events (lead_id, type, data)
    VALUES (msg.lead_id, p_repaired_type, p_repaired_data || jsonb_build_object('messageId', msg.id));
  END IF;
  RETURN QUERY SELECT 'applied'::text, msg.lead_id, v_moved;
END $$;

-- migrations/031's whatsapp_apply_statuses; each item also carries `workspaceId` and `livemode`,
-- and its message is looked up in that workspace and mode only.
CREATE OR REPLACE FUNCTION whatsapp_apply_statuses(p_items jsonb, p_escalate_from text[])
RETURNS TABLE (r_ord int, r_outcome text, r_lead_id uuid, r_moved_from text) LANGUAGE plpgsql AS $$
DECLARE
  it record;
  v_step record;
  v_item jsonb;
  v_n int := jsonb_array_length(p_items);
  v_ord int := 0;
  v_message bigint;
  v_lead uuid;
  v_own_id boolean;
  v_leads uuid[] := '{}';
  v_messages bigint[] := array_fill(NULL::bigint, ARRAY[v_n]);
  -- The message found was recorded under this status's provider and provider id.
  v_own bool[] := array_fill(false, ARRAY[v_n]);
  v_plain bigint[] := '{}';
  v_outcome text[] := array_fill(NULL::text, ARRAY[v_n]);
  v_applied_lead uuid[] := array_fill(NULL::uuid, ARRAY[v_n]);
  v_moved text[] := array_fill(NULL::text, ARRAY[v_n]);
BEGIN
  FOR it IN SELECT DISTINCT hashtext((x->>'provider') || ':' || (x->>'providerMessageId')) AS k
              FROM jsonb_array_elements(p_items) x ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(741322006, it.k);
  END LOOP;
  -- Each message looked up on its own (a unique index each), as whatsapp_apply_status looks it up.
  FOR v_item IN SELECT x FROM jsonb_array_elements(p_items) x LOOP
    v_ord := v_ord + 1;
    SELECT m.id, m.lead_id,
           COALESCE(m.provider = v_item->>'provider' AND m.provider_message_id = v_item->>'providerMessageId', false)
      INTO v_message, v_lead, v_own_id FROM whatsapp_messages m
     WHERE m.direction = 'outbound'
       AND ((m.provider = v_item->>'provider' AND m.provider_message_id = v_item->>'providerMessageId')
            OR (m.idempotency_key = v_item->>'key' AND m.provider = v_item->>'provider'))
       AND (SELECT l.workspace_id = (v_item->>'workspaceId')::uuid AND l.livemode = (v_item->>'livemode')::boolean
              FROM leads l WHERE l.id = m.lead_id)
     ORDER BY (m.provider_message_id = v_item->>'providerMessageId') DESC NULLS LAST LIMIT 1;
    IF FOUND THEN
      v_leads := v_leads || v_lead;
      v_messages[v_ord] := v_message;
      v_own[v_ord] := v_own_id;
    END IF;
  END LOOP;
  PERFORM 1 FROM leads l WHERE l.id = ANY(v_leads) ORDER BY l.id FOR UPDATE;

  -- The plain statuses: of a message recorded under their provider id, that no other status of
  -- the batch is about; a status that can only move the message forward; nothing for the timeline.
  SELECT COALESCE(array_agg(p.message), '{}') INTO v_plain
    FROM (SELECT e.ord, v_messages[e.ord] AS message, v_own[e.ord] AS own, e.x
            FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(x, ord)) p
   WHERE p.message IS NOT NULL AND p.own AND p.x->>'status' IN ('queued', 'sent', 'delivered', 'read')
     AND p.x->>'repairedType' IS NULL
     AND (SELECT count(*) FROM unnest(v_messages) o WHERE o = p.message) = 1;
  IF cardinality(v_plain) > 0 THEN
    FOR it IN
      WITH plain AS (
        SELECT e.ord::int AS ord, v_messages[e.ord] AS message, e.x
          FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(x, ord)
         WHERE v_messages[e.ord] = ANY(v_plain)
      )
      UPDATE whatsapp_messages m SET status = p.x->>'status', status_at = now(),
             error_code = COALESCE(p.x->>'errorCode', m.error_code),
             error_message = COALESCE(p.x->>'errorMessage', m.error_message)
        FROM plain p
       WHERE m.id = ANY(v_plain) AND m.id = p.message
         AND m.provider = p.x->>'provider' AND m.provider_message_id = p.x->>'providerMessageId'
         AND whatsapp_status_rank(p.x->>'status') > whatsapp_status_rank(m.status)
      RETURNING p.ord, m.lead_id
    LOOP
      v_outcome[it.ord] := 'applied';
      v_applied_lead[it.ord] := it.lead_id;
    END LOOP;
  END IF;

  -- A plain status the UPDATE did not take was not newer than its message's: stale. The rest one
  -- by one, in order.
  FOR it IN SELECT e.ord::int AS ord, e.x
              FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(x, ord) ORDER BY e.ord LOOP
    CONTINUE WHEN v_outcome[it.ord] IS NOT NULL;
    IF v_messages[it.ord] = ANY(v_plain) THEN
      v_outcome[it.ord] := 'stale';
      CONTINUE;
    END IF;
    SELECT s.r_outcome, s.r_lead_id, s.r_moved_from INTO v_step
      FROM whatsapp_apply_status((it.x->>'workspaceId')::uuid, (it.x->>'livemode')::boolean,
                                 it.x->>'provider', it.x->>'providerMessageId', it.x->>'key', it.x->>'status',
                                 it.x->>'errorCode', it.x->>'errorMessage', it.x->>'repairedType', it.x->'repairedData',
                                 true, p_escalate_from) s;
    v_outcome[it.ord] := v_step.r_outcome;
    v_applied_lead[it.ord] := v_step.r_lead_id;
    v_moved[it.ord] := v_step.r_moved_from;
  END LOOP;
  RETURN QUERY SELECT o, v_outcome[o], v_applied_lead[o], v_moved[o] FROM generate_series(1, v_n) o;
END $$;

-- migrations/022's whatsapp_record_send; it takes only the statuses held for its lead's workspace
-- and mode.
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
  UPDATE agent_turns SET state = 'sent', updated_at = now() WHERE id = p_turn_id AND state = 'ready';
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

-- migrations/030's whatsapp_record_sends; it takes only the statuses held for each send's lead's
-- workspace and mode.
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
    FOR it IN SELECT e2.ord::int AS ord, e2.x
                FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e2(x, ord) ORDER BY e2.ord LOOP
      RETURN QUERY SELECT it.ord, s.r_moved_from, s.r_escalated_from
        FROM whatsapp_record_send(
               it.x->>'provider', it.x->>'providerMessageId', (it.x->>'messageId')::bigint, (it.x->>'turnId')::bigint,
               (it.x->>'leadId')::uuid, it.x->>'actor', ARRAY(SELECT jsonb_array_elements_text(it.x->'from')),
               it.x->'data', p_escalate_from) s;
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
              USING jsonb_array_elements(p_items) WITH ORDINALITY AS i(x, ord), leads l
              WHERE s.provider_message_id = ANY (v_pmids)
                AND s.provider = i.x->>'provider' AND s.provider_message_id = i.x->>'providerMessageId'
                AND l.id = ANY (v_leads) AND l.id = (i.x->>'leadId')::uuid
                AND s.workspace_id = l.workspace_id AND s.livemode = l.livemode
             RETURNING i.ord::int AS ord, s.id, s.workspace_id, s.livemode, s.provider, s.provider_message_id,
                       s.status, s.error_code, s.error_message
           ) SELECT * FROM taken ORDER BY ord, id LOOP
    SELECT s.r_moved_from INTO v_step
      FROM whatsapp_apply_status(e.workspace_id, e.livemode, e.provider, e.provider_message_id, NULL, e.status,
                                 e.error_code, e.error_message, NULL, NULL, false, p_escalate_from) s;
    v_escalated[e.ord] := COALESCE(v_step, v_escalated[e.ord]);
  END LOOP;

  RETURN QUERY SELECT o, v_moved[o], v_escalated[o] FROM generate_series(1, v_n) o;
END $$;
