-- Engram schema, migration 11: reminders and events exchanged as iCalendar (RFC 5545).
-- `ends_at` (milliseconds) is when an event ends, when known (an imported DTEND or DURATION;
-- NULL: one hour after `due_at`). `calendar_uid` is the iCalendar UID of an item brought in by
-- `engram import FILE.ics` (or exported elsewhere and imported here): a second import of the
-- same file finds its items by it instead of adding them again, and `engram export --format
-- ics` writes it back, so a calendar app sees the same item. `recurrence` keeps an imported
-- RRULE's value as text (written back on export; not expanded).
ALTER TABLE agent_items ADD COLUMN ends_at INTEGER;
ALTER TABLE agent_items ADD COLUMN calendar_uid TEXT;
ALTER TABLE agent_items ADD COLUMN recurrence TEXT;
CREATE UNIQUE INDEX agent_items_calendar_uid ON agent_items(user_id, calendar_uid)
  WHERE calendar_uid IS NOT NULL;
