-- Engram shared store, migration 6: reminders and events exchanged as iCalendar (SQLite
-- migration 11). `ends_at` is an event's end when known (NULL: one hour after `due_at`);
-- `calendar_uid` the iCalendar UID an imported item came with (a re-import finds it, an export
-- writes it back); `recurrence` an imported RRULE value, kept as text.
ALTER TABLE agent_items ADD COLUMN ends_at bigint;
ALTER TABLE agent_items ADD COLUMN calendar_uid text;
ALTER TABLE agent_items ADD COLUMN recurrence text;
CREATE UNIQUE INDEX agent_items_calendar_uid ON agent_items (user_scope, calendar_uid)
  WHERE calendar_uid IS NOT NULL;

INSERT INTO engram_schema (version, name) VALUES (6, 'agent_item_calendar');
