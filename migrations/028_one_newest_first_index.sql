-- One index for a workspace's newest-first order instead of two (docs/PERFORMANCE.md, "Many
-- workspaces"; docs/DASHBOARD.md, "The inbox"). Every new lead wrote an entry into both 001's
-- leads_workspace_created (workspace_id, created_at) and 011's leads_inbox (workspace_id,
-- livemode, created_at, id), yet the inbox's newest-first walk could only use the first: it asks
-- for `livemode = ANY(…)` (live leads, or live and sandbox ones), which a btree cannot answer in
-- order from a middle column. The one index left is keyed like the inbox's keyset pages,
-- (workspace_id, created_at, id): pages come out of it in their exact order, ties of one
-- statement's leads included, and the sandbox leads (kept 7 days, src/sandbox/) are filtered out
-- on the way, as on leads_inbox_activity. livemode is INCLUDEd, so counting a workspace's leads
-- of a mode stays an index-only scan.
DROP INDEX leads_workspace_created;
DROP INDEX leads_inbox;
CREATE INDEX leads_inbox ON leads (workspace_id, created_at DESC, id DESC) INCLUDE (livemode);
