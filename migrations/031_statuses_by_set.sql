-- whatsapp_apply_statuses (migration 022) applied a batch of delivery statuses by calling
-- whatsapp_apply_status once per status: per status a look-up, two locks, a re-read and an
-- UPDATE of the message, each UPDATE running the statement-level trigger of whatsapp_messages
-- (the live pages'). In a 10,000-lead burst (1.7 statuses a lead) that was 13 % of PostgreSQL's
-- time (docs/PERFORMANCE.md, "First sends and delivery statuses by set").
--
-- Most statuses only move their message forward or are stale: `queued`, `sent`, `delivered` or
-- `read` of a message we recorded under this provider id, which writes nothing but that message's
-- row (and a stale one nothing at all). Those are now applied by one UPDATE for the batch, when no
-- other status of the batch is about the same message (then their order matters, and one
-- statement cannot see its own writes); one the UPDATE did not take is stale, as it was. Everything
-- else — a failure (it may hand the lead to a person and writes the timeline), a repaired text, a
-- status of a message we do not know yet (held), a second provider message under our key (a
-- duplicate send), a send not recorded yet (its provider id is written with the status) — goes
-- through whatsapp_apply_status one by one in the batch's order, as before, after the plain ones:
-- those touch other messages' rows and no timeline, so what the batch writes is what applying each
-- in order wrote (test/delivery-status-batch.test.ts). Locks as before, taken first: the messages' advisory locks
-- by key, then the leads' rows by id.
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
    SELECT m.id, m.lead_id, COALESCE(m.provider = v_item->>'provider' AND m.provider_message_id = v_item->>'providerMessageId', false)
      INTO v_message, v_lead, v_own_id FROM whatsapp_messages m
     WHERE m.direction = 'outbound'
       AND ((m.provider = v_item->>'provider' AND m.provider_message_id = v_item->>'providerMessageId') OR m.idempotency_key = v_item->>'key')
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
    FROM (SELECT e.ord, v_messages[e.ord] AS message, v_own[e.ord] AS own, e.x FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(x, ord)) p
   WHERE p.message IS NOT NULL AND p.own AND p.x->>'status' IN ('queued', 'sent', 'delivered', 'read') AND p.x->>'repairedType' IS NULL
     AND (SELECT count(*) FROM unnest(v_messages) o WHERE o = p.message) = 1;
  IF cardinality(v_plain) > 0 THEN
    FOR it IN
      WITH plain AS (
        SELECT e.ord::int AS ord, v_messages[e.ord] AS message, e.x
          FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(x, ord)
         WHERE v_messages[e.ord] = ANY(v_plain)
      )
      UPDATE whatsapp_messages m SET status = p.x->>'status', status_at = now(),
             error_code = COALESCE(p.x->>'errorCode', m.error_code), error_message = COALESCE(p.x->>'errorMessage', m.error_message)
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
  FOR it IN SELECT e.ord::int AS ord, e.x FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(x, ord) ORDER BY e.ord LOOP
    CONTINUE WHEN v_outcome[it.ord] IS NOT NULL;
    IF v_messages[it.ord] = ANY(v_plain) THEN
      v_outcome[it.ord] := 'stale';
      CONTINUE;
    END IF;
    SELECT s.r_outcome, s.r_lead_id, s.r_moved_from INTO v_step
      FROM whatsapp_apply_status(it.x->>'provider', it.x->>'providerMessageId', it.x->>'key', it.x->>'status',
                                 it.x->>'errorCode', it.x->>'errorMessage', it.x->>'repairedType', it.x->'repairedData',
                                 true, p_escalate_from) s;
    v_outcome[it.ord] := v_step.r_outcome;
    v_applied_lead[it.ord] := v_step.r_lead_id;
    v_moved[it.ord] := v_step.r_moved_from;
  END LOOP;
  RETURN QUERY SELECT o, v_outcome[o], v_applied_lead[o], v_moved[o] FROM generate_series(1, v_n) o;
END $$;
