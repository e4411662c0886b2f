-- Outbound webhooks (docs/OUTBOUND-WEBHOOKS.md): a workspace's endpoints receive signed events
-- about its leads. An event row is written by a trigger on lead_events, so it commits in the same
-- transaction as the change that causes it, whichever code path wrote that change; each matching
-- endpoint gets a delivery row and an outbox row (the relay hands it to the `webhook-delivery` queue).

CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  url text NOT NULL,
  -- Empty: every event type.
  event_types text[] NOT NULL DEFAULT '{}',
  enabled boolean NOT NULL DEFAULT true,
  -- The signing secrets, sealed with the encryption key (bound to the endpoint id). After a rotation
  -- the previous secret still signs until previous_secret_expires_at.
  secret_ciphertext bytea NOT NULL,
  previous_secret_ciphertext bytea,
  previous_secret_expires_at timestamptz,
  -- Set by the first failed attempt after a success; an endpoint failing for 5 days is disabled.
  failing_since timestamptz,
  disabled_at timestamptz,
  disabled_reason text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id) WHERE enabled;

CREATE TABLE webhook_events (
  id bigserial PRIMARY KEY,
  -- The webhook-id header (stable across retries and endpoints).
  message_id text NOT NULL UNIQUE DEFAULT 'msg_' || replace(gen_random_uuid()::text, '-', ''),
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  -- Erasing a lead erases its events (they hold its personal data).
  lead_id uuid NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
  livemode boolean NOT NULL,
  type text NOT NULL,
  -- What the payload is built from: the lead row as it was when the event happened, the
  -- timeline entry's data, and for call and message events the call or message row.
  lead jsonb NOT NULL,
  detail jsonb NOT NULL DEFAULT '{}',
  at timestamptz NOT NULL
);

CREATE TABLE webhook_deliveries (
  id bigserial PRIMARY KEY,
  event_id bigint NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  lead_id uuid NOT NULL REFERENCES leads (id) ON DELETE CASCADE,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- Held while an attempt is in flight, so a duplicate job does not send twice at once.
  lease_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz
);
-- Order per lead and endpoint: a delivery waits while an earlier one of the same pair is pending.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (endpoint_id, lead_id, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);

CREATE TABLE webhook_attempts (
  id bigserial PRIMARY KEY,
  delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  at timestamptz NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'refused')),
  status_code integer,
  latency_ms integer NOT NULL,
  -- The first 1 KiB of the answer, or why there was none (timeout, refused address).
  response_excerpt text NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- One event for every enabled endpoint of the lead's workspace that takes its type: the event row,
-- a delivery per endpoint and the outbox rows that become their jobs.
CREATE FUNCTION webhook_emit(p_lead_id uuid, p_type text, p_detail jsonb, p_at timestamptz) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  ws uuid;
  live boolean;
  lead_row jsonb;
  ev bigint;
BEGIN
  SELECT workspace_id, livemode, to_jsonb(l) INTO ws, live, lead_row FROM leads l WHERE l.id = p_lead_id;
  IF ws IS NULL OR NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.workspace_id = ws AND e.enabled
                                  AND (cardinality(e.event_types) = 0 OR p_type = ANY (e.event_types))) THEN
    RETURN;
  END IF;
  INSERT INTO webhook_events (workspace_id, lead_id, livemode, type, lead, detail, at)
  VALUES (ws, p_lead_id, live, p_type, lead_row, p_detail, p_at) RETURNING id INTO ev;
  WITH d AS (
    INSERT INTO webhook_deliveries (event_id, endpoint_id, lead_id)
    SELECT ev, e.id, p_lead_id FROM webhook_endpoints e
     WHERE e.workspace_id = ws AND e.enabled AND (cardinality(e.event_types) = 0 OR p_type = ANY (e.event_types))
     ORDER BY e.id
    RETURNING id
  )
  INSERT INTO outbox (queue, payload) SELECT 'webhook-delivery', jsonb_build_object('deliveryId', d.id) FROM d ORDER BY d.id;
END;
$$;

-- Timeline entries that are webhook events: lead.created, every status change (an entry with
-- `from` and `to`), Cal.com reschedules and cancellations, WhatsApp messages in and out.
CREATE FUNCTION webhook_capture_lead_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.type = 'lead.created' THEN
    PERFORM webhook_emit(NEW.lead_id, 'lead.created', NEW.data, NEW.at);
  END IF;
  -- What happened first, then the status change it caused (a first message sent starts the
  -- conversation; a cancellation sends the lead to a person).
  IF NEW.type IN ('message.received', 'message.sent') THEN
    PERFORM webhook_emit(NEW.lead_id, NEW.type, NEW.data || jsonb_build_object('message',
      (SELECT to_jsonb(m) FROM whatsapp_messages m WHERE m.id = (NEW.data->>'messageId')::bigint)), NEW.at);
  END IF;
  IF NEW.type IN ('booking.rescheduled', 'booking.cancelled') THEN
    PERFORM webhook_emit(NEW.lead_id, 'lead.booking_changed', NEW.data, NEW.at);
  END IF;
  IF NEW.data ? 'from' AND NEW.data ? 'to' AND NEW.data->>'from' IS DISTINCT FROM NEW.data->>'to' THEN
    PERFORM webhook_emit(NEW.lead_id, 'lead.status_changed', NEW.data, NEW.at);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER lead_events_webhooks AFTER INSERT ON lead_events
  FOR EACH ROW EXECUTE FUNCTION webhook_capture_lead_event();

-- call.ended: once the call has ended and the provider's end-of-call report is in, so the event
-- carries the summary, transcript and recording (a status update saying "ended" comes first).
CREATE FUNCTION webhook_capture_call_end() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'ended' AND NEW.report_received_at IS NOT NULL
     AND NOT (OLD.status = 'ended' AND OLD.report_received_at IS NOT NULL) THEN
    PERFORM webhook_emit(NEW.lead_id, 'call.ended', jsonb_build_object('call', to_jsonb(NEW)), COALESCE(NEW.report_received_at, now()));
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER call_sessions_webhooks AFTER UPDATE ON call_sessions
  FOR EACH ROW EXECUTE FUNCTION webhook_capture_call_end();
