-- The Analytics funnel's Conversation stage counts a lead only once it was contacted
-- (src/admin/analytics/analytics-queries.ts, CONVERSED): a lead that wrote without ever being
-- contacted (its number on the do-not-contact list, a first send that failed) made the stage
-- larger than the one before it. Day summaries written before this migration count it the old
-- way: dropped, the next reader (or the maintenance pass) writes them again.
DELETE FROM analytics_days;
DELETE FROM analytics_changes;
