-- A sandbox lead's opt-out no longer puts its number on the workspace's do-not-contact list.
-- The list is the live one: anyone with a sandbox key (a publishable one sits in web pages) can make
-- a sandbox lead with any number opt out, and that ended the real lead's plan and refused every
-- live message and call to it. A sandbox opt-out still closes its own lead (lead-opt-out.ts).
DROP TRIGGER leads_opt_out_suppresses ON leads;
CREATE TRIGGER leads_opt_out_suppresses AFTER UPDATE OF opted_out_at ON leads FOR EACH ROW
  WHEN (OLD.opted_out_at IS NULL AND NEW.opted_out_at IS NOT NULL AND NEW.livemode)
  EXECUTE FUNCTION suppress_on_opt_out();

-- Entries a sandbox opt-out made: one a live lead's own opt-out would also have made is kept, now
-- naming that live lead; the others go.
UPDATE suppressed_numbers s
   SET (lead_id, created_at) = (SELECT l.id, l.opted_out_at FROM leads l
                                 WHERE l.workspace_id = s.workspace_id AND l.phone_normalized = s.phone_e164
                                   AND l.livemode AND l.opted_out_at IS NOT NULL
                                 ORDER BY l.opted_out_at LIMIT 1)
 WHERE s.source = 'opt_out'
   AND EXISTS (SELECT 1 FROM leads sb WHERE sb.id = s.lead_id AND NOT sb.livemode)
   AND EXISTS (SELECT 1 FROM leads l WHERE l.workspace_id = s.workspace_id AND l.phone_normalized = s.phone_e164
                                       AND l.livemode AND l.opted_out_at IS NOT NULL);
DELETE FROM suppressed_numbers s USING leads sb
 WHERE s.source = 'opt_out' AND sb.id = s.lead_id AND NOT sb.livemode;
