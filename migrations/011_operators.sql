-- The operators' dashboard (issue 13): people who sign in, their memberships of workspaces with a
-- role, their sessions, and the sign-in throttle. Passwords are scrypt hashes (src/operators/password.ts);
-- sessions are looked up by the SHA-256 of their cookie token, so a copy of this table signs nobody in.

CREATE TABLE operators (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  -- Stored lower-cased: one account per address whatever its spelling.
  email text NOT NULL UNIQUE CHECK (email = lower(email) AND position('@' IN email) > 1),
  name text NOT NULL,
  -- `scrypt$N$r$p$<salt b64>$<hash b64>`.
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
  operator_id uuid NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL REFERENCES workspaces (id),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'agent', 'viewer')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (operator_id, workspace_id)
);
CREATE INDEX memberships_workspace ON memberships (workspace_id);

CREATE TABLE operator_sessions (
  token_hash bytea PRIMARY KEY,
  operator_id uuid NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  -- Sent back in the X-CSRF-Token header of every state-changing request (double submit is not
  -- needed: the page reads it from /api/admin/session, which a cross-site page cannot read).
  csrf_token text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX operator_sessions_operator ON operator_sessions (operator_id);
CREATE INDEX operator_sessions_last_seen ON operator_sessions (last_seen_at);

-- Failed sign-ins per account and per client IP in a sliding window (src/operators/sign-in-throttle.ts).
CREATE TABLE sign_in_failures (
  id bigserial PRIMARY KEY,
  -- `email:<address>` or `ip:<address>`.
  subject text NOT NULL,
  at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sign_in_failures_subject ON sign_in_failures (subject, at);

-- An operator's WhatsApp reply is the outbound message of a turn of its own kind, sent by the
-- turn engine like the agent's (src/admin/operator-reply.ts).
ALTER TABLE agent_turns DROP CONSTRAINT agent_turns_kind_check;
ALTER TABLE agent_turns ADD CONSTRAINT agent_turns_kind_check CHECK (kind IN ('first_contact', 'reply', 'operator'));

-- The inbox (docs/DASHBOARD.md): keyset pages per workspace, mode and status, newest first, and
-- the counts per status from one index-only scan of a narrow index.
CREATE INDEX leads_inbox ON leads (workspace_id, livemode, created_at DESC, id DESC);
CREATE INDEX leads_inbox_status ON leads (workspace_id, livemode, status, created_at DESC, id DESC);
CREATE INDEX leads_inbox_email ON leads (workspace_id, lower(email)) WHERE email IS NOT NULL;

-- Live updates (docs/DASHBOARD.md, "Live updates"): every change a dashboard page shows is
-- announced on the channel `leadintake_live` by statement-level triggers, so whatever process or
-- path made it (a public API batch, a worker's turn, a provider's webhook, the CLI), every page
-- hears of it, and only once its transaction commits (NOTIFY is transactional). One notification
-- per workspace per statement, not per row: a batch of a thousand new leads costs one NOTIFY.
-- Payload: {"w": workspace id, "k": kind, "l": [lead ids] or null when more than 20}.
CREATE FUNCTION leadintake_announce(workspace uuid, kind text, n bigint, ids uuid[]) RETURNS void LANGUAGE sql AS $$
  SELECT pg_notify('leadintake_live', jsonb_build_object('w', workspace, 'k', kind, 'l', CASE WHEN n <= 20 THEN to_jsonb(ids) END)::text)
$$;

-- Per workspace: how many rows, and the first 20 lead ids (all of them when there are no more).
CREATE FUNCTION leads_announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM leadintake_announce(w, 'lead.created', n, ids)
       FROM (SELECT workspace_id AS w, count(*) AS n, (array_agg(id))[1:20] AS ids FROM new_rows GROUP BY 1) g;
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM leadintake_announce(w, 'lead.deleted', n, ids)
       FROM (SELECT workspace_id AS w, count(*) AS n, (array_agg(id))[1:20] AS ids FROM old_rows GROUP BY 1) g;
  ELSE
    PERFORM leadintake_announce(w, 'lead.status', n, ids)
       FROM (SELECT nw.workspace_id AS w, count(*) AS n, (array_agg(nw.id))[1:20] AS ids
               FROM new_rows nw JOIN old_rows o ON o.id = nw.id
              WHERE nw.status IS DISTINCT FROM o.status OR nw.booking_uid IS DISTINCT FROM o.booking_uid GROUP BY 1) g;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER leads_announce_insert AFTER INSERT ON leads REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION leads_announce();
CREATE TRIGGER leads_announce_update AFTER UPDATE ON leads REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION leads_announce();
CREATE TRIGGER leads_announce_delete AFTER DELETE ON leads REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION leads_announce();

-- A message in or out, and each delivery status; a call's start, status and end.
CREATE FUNCTION lead_children_announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM leadintake_announce(w, TG_ARGV[0], n, ids)
     FROM (SELECT l.workspace_id AS w, count(DISTINCT c.lead_id) AS n, (array_agg(DISTINCT c.lead_id))[1:20] AS ids
             FROM new_rows c JOIN leads l ON l.id = c.lead_id GROUP BY 1) g;
  RETURN NULL;
END $$;
CREATE TRIGGER whatsapp_messages_announce_insert AFTER INSERT ON whatsapp_messages REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_children_announce('message');
CREATE TRIGGER whatsapp_messages_announce_update AFTER UPDATE ON whatsapp_messages REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_children_announce('message');
CREATE TRIGGER call_sessions_announce_insert AFTER INSERT ON call_sessions REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_children_announce('call');
CREATE TRIGGER call_sessions_announce_update AFTER UPDATE ON call_sessions REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION lead_children_announce('call');
