-- Engram shared store, migration 4: reminders are delivered (SQLite migration 9).
-- `delivered_at` (milliseconds) is when a reminder was shown after it came due; NULL until
-- then. Delivery claims rows with UPDATE ... RETURNING, so two watchers never show one
-- reminder twice.
ALTER TABLE agent_items ADD COLUMN delivered_at bigint;

INSERT INTO engram_schema (version, name) VALUES (4, 'reminder_delivery');
