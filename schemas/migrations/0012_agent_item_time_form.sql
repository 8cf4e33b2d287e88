-- Engram schema, migration 12: an item's time written back as it came (docs/icalendar.md).
-- `time_form` says how an imported iCalendar time was written: 'utc' (an instant, and every
-- item made here), 'date' (an all-day item: `due_at`/`ends_at` are its first day and the day
-- after its last at 09:00 in `time_zone`), 'floating' (a wall-clock time without a zone, read
-- in `time_zone`, the importing user's zone) or 'zoned' (a TZID time; `time_zone` is the IANA
-- identifier, or a fixed offset such as `GMT+0530`, it named). An export writes each form
-- back (VALUE=DATE, a floating time, TZID=...), and a repeating item's occurrences are
-- computed in `time_zone`.
ALTER TABLE agent_items ADD COLUMN time_form TEXT NOT NULL DEFAULT 'utc'
  CHECK (time_form IN ('utc', 'date', 'floating', 'zoned'));
ALTER TABLE agent_items ADD COLUMN time_zone TEXT;
