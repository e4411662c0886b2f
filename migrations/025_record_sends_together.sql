-- The sends of a batch of first contacts recorded by one statement (src/whatsapp/turn-engine.ts,
-- runFirstContacts; docs/WHATSAPP.md, "First contacts in batches"): what whatsapp_record_send does
-- for one send, for each item, in one transaction. Every lock is taken up front in the order all
-- callers use (migrations/022): the messages' advisory locks by key, then the leads' rows by id;
-- whatsapp_record_send then takes them again, which a transaction that holds them passes at once.
-- Items: {provider, providerMessageId, messageId, turnId, leadId, actor, from (text[]), data}; one
-- row out per item, in the items' order.
CREATE FUNCTION whatsapp_record_sends(p_items jsonb, p_escalate_from text[])
RETURNS TABLE (r_ord int, r_moved_from text, r_escalated_from text) LANGUAGE plpgsql AS $$
DECLARE
  it record;
BEGIN
  FOR it IN SELECT DISTINCT hashtext((x->>'provider') || ':' || (x->>'providerMessageId')) AS k
              FROM jsonb_array_elements(p_items) x ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(741322006, it.k);
  END LOOP;
  PERFORM 1 FROM leads l
   WHERE l.id IN (SELECT (x->>'leadId')::uuid FROM jsonb_array_elements(p_items) x)
   ORDER BY l.id FOR UPDATE;
  FOR it IN SELECT e.ord::int AS ord, e.x FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(x, ord) ORDER BY e.ord LOOP
    RETURN QUERY SELECT it.ord, s.r_moved_from, s.r_escalated_from
      FROM whatsapp_record_send(
             it.x->>'provider', it.x->>'providerMessageId', (it.x->>'messageId')::bigint, (it.x->>'turnId')::bigint,
             (it.x->>'leadId')::uuid, it.x->>'actor', ARRAY(SELECT jsonb_array_elements_text(it.x->'from')), it.x->'data', p_escalate_from) s;
  END LOOP;
END $$;
