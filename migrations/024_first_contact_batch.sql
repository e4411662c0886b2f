-- First contacts taken in batches (src/whatsapp/first-contacts.ts; docs/WHATSAPP.md, "First
-- contacts in batches"): one connection takes the turn locks of several leads at once. A lead
-- whose lock another turn holds is skipped, not waited for (that lead's job then runs on its own
-- and waits there), so a batch never waits behind one busy lead. Each lock taken clears the
-- lead's "turn requested" flag as lead_lock_for_turn does, in a statement of its own that runs
-- after the lock is granted; returns the leads whose locks were taken.
CREATE FUNCTION lead_try_lock_for_turns(p_namespace int, p_leads text[]) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  v_lead text;
BEGIN
  FOREACH v_lead IN ARRAY p_leads LOOP
    IF pg_try_advisory_lock(p_namespace, hashtext(v_lead)) THEN
      UPDATE leads SET turn_requested_at = NULL WHERE id = v_lead::uuid AND turn_requested_at IS NOT NULL;
      RETURN NEXT v_lead;
    END IF;
  END LOOP;
END $$;
