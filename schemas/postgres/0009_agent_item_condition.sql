-- Engram shared store, migration 9: a reminder kept with the condition it fires under (SQLite
-- migration 13). `condition` is the condition as a JSON object, checked just before the
-- reminder is handed over; `condition_outcome` is what that check came to (`state` 'held',
-- 'failed' or 'unchecked', and `reason`). Both are NULL for a reminder without a condition.
ALTER TABLE agent_items ADD COLUMN condition text;
ALTER TABLE agent_items ADD COLUMN condition_outcome text;

INSERT INTO engram_schema (version, name) VALUES (9, 'agent_item_condition');
