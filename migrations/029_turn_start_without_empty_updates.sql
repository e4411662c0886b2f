-- A turn's start cleared the lead's "turn requested" flag with an UPDATE of its own, every time
-- (migrations 023 and 024). A first contact's lead never has the flag (only an inbound message
-- sets it), so in a burst that UPDATE found no row, once per lead — and an UPDATE of no row
-- still fires the statement-level triggers of leads (the funnel's and the live pages'), each with
-- its transition tables: the first contacts' lock statement took 2.9 % of PostgreSQL's time in a
-- 10,000-lead burst, 1.3 % now (pg_stat_statements,
-- docs/PERFORMANCE.md, "Burst drain"). Now the flag is looked at first, after the lock is granted
-- as before (a statement of its own, so it sees a flag committed while the lock was waited for),
-- and the leads of a batch that have it are cleared by one UPDATE.

CREATE OR REPLACE FUNCTION lead_lock_for_turn(p_namespace int, p_lead text, p_clear_request boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_lock(p_namespace, hashtext(p_lead));
  IF p_clear_request AND EXISTS (SELECT 1 FROM leads WHERE id = p_lead::uuid AND turn_requested_at IS NOT NULL) THEN
    UPDATE leads SET turn_requested_at = NULL WHERE id = p_lead::uuid AND turn_requested_at IS NOT NULL;
  END IF;
END $$;

CREATE OR REPLACE FUNCTION lead_try_lock_for_turns(p_namespace int, p_leads text[]) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  v_lead text;
  v_taken uuid[] := '{}';
BEGIN
  FOREACH v_lead IN ARRAY p_leads LOOP
    IF pg_try_advisory_lock(p_namespace, hashtext(v_lead)) THEN
      v_taken := v_taken || v_lead::uuid;
      RETURN NEXT v_lead;
    END IF;
  END LOOP;
  IF EXISTS (SELECT 1 FROM leads WHERE id = ANY(v_taken) AND turn_requested_at IS NOT NULL) THEN
    UPDATE leads SET turn_requested_at = NULL WHERE id = ANY(v_taken) AND turn_requested_at IS NOT NULL;
  END IF;
END $$;
