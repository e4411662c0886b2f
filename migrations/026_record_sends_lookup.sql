-- whatsapp_record_sends (migration 025) locked its batch's leads with `id IN (SELECT … FROM
-- jsonb_array_elements(…))`. PostgreSQL guesses 100 rows for such a set, so while the leads table
-- held a few thousand rows it planned a hash join over a scan of every lead, and the function kept
-- that plan for the life of the connection: a 10,000-lead burst read the whole table once per
-- batch of first contacts (docs/PERFORMANCE.md, "Young tables"). `= ANY(ARRAY(…))` is planned as
-- look-ups in the primary key whatever the table's size. Same locks, in the same order.
CREATE OR REPLACE FUNCTION whatsapp_record_sends(p_items jsonb, p_escalate_from text[])
RETURNS TABLE (r_ord int, r_moved_from text, r_escalated_from text) LANGUAGE plpgsql AS $$
DECLARE
  it record;
BEGIN
  FOR it IN SELECT DISTINCT hashtext((x->>'provider') || ':' || (x->>'providerMessageId')) AS k
              FROM jsonb_array_elements(p_items) x ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(741322006, it.k);
  END LOOP;
  PERFORM 1 FROM leads l
   WHERE l.id = ANY (ARRAY(SELECT (x->>'leadId')::uuid FROM jsonb_array_elements(p_items) x))
   ORDER BY l.id FOR UPDATE;
  FOR it IN SELECT e.ord::int AS ord, e.x FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(x, ord) ORDER BY e.ord LOOP
    RETURN QUERY SELECT it.ord, s.r_moved_from, s.r_escalated_from
      FROM whatsapp_record_send(
             it.x->>'provider', it.x->>'providerMessageId', (it.x->>'messageId')::bigint, (it.x->>'turnId')::bigint,
             (it.x->>'leadId')::uuid, it.x->>'actor', ARRAY(SELECT jsonb_array_elements_text(it.x->'from')), it.x->'data', p_escalate_from) s;
  END LOOP;
END $$;
