-- A contact plan's change is announced to open dashboards like a lead's other parts (migration
-- 011's lead_children_announce, kind `plan`): Call now, Skip and Stop follow-ups, a step taken or
-- scheduled change only `contact_plans` and the timeline, so an inbox showing the next attempt or
-- a lead page showing its follow-ups stayed as it was until something else changed.
CREATE TRIGGER contact_plans_announce_insert AFTER INSERT ON contact_plans REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_children_announce('plan');
CREATE TRIGGER contact_plans_announce_update AFTER UPDATE ON contact_plans REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_children_announce('plan');
