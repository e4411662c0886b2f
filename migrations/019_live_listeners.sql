-- Notify only while someone watches (docs/DASHBOARD.md, "Live updates"; docs/PERFORMANCE.md,
-- "NOTIFY serialises commits"). PostgreSQL holds one database-wide lock from a notifying
-- transaction's pre-commit until its commit is flushed, so every transaction that calls
-- pg_notify commits one at a time: with 64 concurrent small writers, half the throughput. The
-- triggers of migrations 011 and 016 therefore notify only while some process has a live page
-- open: each such process keeps a row here (src/admin/live-events.ts) with a lease it renews, so
-- a process that dies stops counting within the lease. UNLOGGED: a crash of PostgreSQL empties it,
-- and the processes, whose LISTEN connections the crash cut, write their rows again on reconnecting.
CREATE UNLOGGED TABLE live_listeners (
  listener text PRIMARY KEY,
  until timestamptz NOT NULL
);

CREATE OR REPLACE FUNCTION leadintake_announce(workspace uuid, kind text, n bigint, ids uuid[]) RETURNS void LANGUAGE sql AS $$
  SELECT pg_notify('leadintake_live', jsonb_build_object('w', workspace, 'k', kind, 'l', CASE WHEN n <= 20 THEN to_jsonb(ids) END)::text)
   WHERE EXISTS (SELECT 1 FROM live_listeners WHERE until > now())
$$;
