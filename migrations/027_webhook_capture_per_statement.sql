-- The outbound webhooks' capture of timeline entries (migration 010), once per statement instead of
-- once per row (docs/PERFORMANCE.md, "Many workspaces"). The row trigger ran a PL/pgSQL call and
-- read the entry's lead, with its whole row turned into JSON, for every timeline entry of every
-- workspace — a new lead's `lead.created`, each first message, each status change — whether or not
-- its workspace has an endpoint; most have none. Now one query per statement picks the entries
-- whose workspace has an enabled endpoint, and only those are captured, in the order they were
-- inserted, exactly as before (webhook_emit still checks each endpoint's event types).
CREATE FUNCTION webhook_capture_lead_events() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  e record;
BEGIN
  FOR e IN SELECT n.lead_id, n.type, n.data, n.at
             FROM new_rows n JOIN leads l ON l.id = n.lead_id
            WHERE EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.workspace_id = l.workspace_id AND w.enabled)
            ORDER BY n.id LOOP
    IF e.type = 'lead.created' THEN
      PERFORM webhook_emit(e.lead_id, 'lead.created', e.data, e.at);
    END IF;
    -- What happened first, then the status change it caused (a first message sent starts the
    -- conversation; a cancellation sends the lead to a person).
    IF e.type IN ('message.received', 'message.sent') THEN
      PERFORM webhook_emit(e.lead_id, e.type, e.data || jsonb_build_object('message',
        (SELECT to_jsonb(m) FROM whatsapp_messages m WHERE m.id = (e.data->>'messageId')::bigint)), e.at);
    END IF;
    IF e.type IN ('booking.rescheduled', 'booking.cancelled') THEN
      PERFORM webhook_emit(e.lead_id, 'lead.booking_changed', e.data, e.at);
    END IF;
    IF e.data ? 'from' AND e.data ? 'to' AND e.data->>'from' IS DISTINCT FROM e.data->>'to' THEN
      PERFORM webhook_emit(e.lead_id, 'lead.status_changed', e.data, e.at);
    END IF;
  END LOOP;
  RETURN NULL;
END;
$$;

DROP TRIGGER lead_events_webhooks ON lead_events;
DROP FUNCTION webhook_capture_lead_event();
CREATE TRIGGER lead_events_webhooks AFTER INSERT ON lead_events REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_capture_lead_events();
