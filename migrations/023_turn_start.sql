-- A turn's start in one round trip (docs/PERFORMANCE.md, "Burst drain"): the lead's turn lock
-- (src/whatsapp/lead-lock.ts: a session-level advisory lock, held by the connection that runs the
-- turn) and, once it is held, the lead's "turn requested" flag cleared: from then on a new message
-- must enqueue a job of its own, this turn may already be past it. The UPDATE runs after the lock
-- is granted (a PL/pgSQL statement of its own), as the two statements did before.
CREATE FUNCTION lead_lock_for_turn(p_namespace int, p_lead text, p_clear_request boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_lock(p_namespace, hashtext(p_lead));
  IF p_clear_request THEN
    UPDATE leads SET turn_requested_at = NULL WHERE id = p_lead::uuid AND turn_requested_at IS NOT NULL;
  END IF;
END $$;
