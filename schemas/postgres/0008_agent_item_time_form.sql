-- Engram shared store, migration 8: an item's time written back as it came (SQLite migration
-- 12). `time_form` is 'utc' (an instant, and every item made here), 'date' (all day),
-- 'floating' (a wall-clock time read in `time_zone`) or 'zoned' (a TZID time; `time_zone` the
-- zone it named).
ALTER TABLE agent_items ADD COLUMN time_form text NOT NULL DEFAULT 'utc'
  CHECK (time_form IN ('utc', 'date', 'floating', 'zoned'));
ALTER TABLE agent_items ADD COLUMN time_zone text;

INSERT INTO engram_schema (version, name) VALUES (8, 'agent_item_time_form');
