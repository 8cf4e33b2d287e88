-- Engram schema, migration 13: a reminder kept with the condition it fires under (docs/agenda.md
-- "Conditional reminders"). `condition` is the condition as the agent stored it (a JSON object:
-- kind, about, negated, when, zone, place, text); it is checked just before the reminder is
-- handed over. `condition_outcome` is what that check came to (a JSON object: `state` 'held',
-- 'failed' or 'unchecked', and `reason`, a sentence): a reminder whose condition failed is
-- delivered without firing. Both are NULL for a reminder without a condition.
ALTER TABLE agent_items ADD COLUMN condition TEXT;
ALTER TABLE agent_items ADD COLUMN condition_outcome TEXT;
