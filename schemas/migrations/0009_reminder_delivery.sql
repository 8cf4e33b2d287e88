-- Engram schema, migration 9: reminders are delivered.
-- `delivered_at` (milliseconds) is when a reminder was shown to the user after it came due
-- (`engram reminders --due`, `--watch`, `engram chat`); NULL until then. Delivery claims a
-- row by setting it in the same write transaction that reads it, so two watchers never
-- show one reminder twice. Events and notes leave it NULL.
ALTER TABLE agent_items ADD COLUMN delivered_at INTEGER;
