-- Engram schema, migration 5: reads that read only what they need.
--
-- 1. Known speakers without a scan. Hybrid search asks which speakers the memory knows (a
--    query naming one favours that speaker's turns); `SELECT DISTINCT speaker` read every
--    turn, 140 ms at 100,000 turns. With this index the distinct names are found by a
--    skip scan (one index seek per name: `Connection.distinctSpeakers()`).
CREATE INDEX messages_speaker ON messages(speaker) WHERE speaker IS NOT NULL;

-- 2. A log of the embedding changes a vector-index snapshot cannot see by itself.
--    Each change of `embeddings` bumps `embedding_generation` by one (one per row). A
--    snapshot written at generation G holds exactly the rows of that state; its stamp
--    (meta 'vector_snapshot') also records the highest embedding id it holds. A later
--    reader brings it up to date instead of rebuilding the whole index: rows with a higher
--    id are the appends, and this table names every other change after G (deletions,
--    updates, inserts below the highest id), keyed by the generation it produced, with
--    the embedding id and owner it touched (an update that moves a row to another id or
--    owner logs both). Appends, the common case, are not logged. Entries at or below meta
--    'embedding_changes_floor' have been pruned (a writer prunes what its new snapshot
--    holds); a snapshot older than the floor is rebuilt from the table.
CREATE TABLE embedding_changes (
  seq          INTEGER PRIMARY KEY,
  generation   INTEGER NOT NULL,
  embedding_id INTEGER NOT NULL,
  owner_kind   TEXT NOT NULL,
  owner_id     INTEGER NOT NULL
);
CREATE INDEX embedding_changes_generation ON embedding_changes(generation);
INSERT INTO meta (key, value)
SELECT 'embedding_changes_floor', CAST(generation AS TEXT) FROM embedding_generation WHERE id = 1
ON CONFLICT (key) DO UPDATE SET value = excluded.value;

-- The generation triggers now bump and log in one body, in a defined order (the log
-- entry carries the generation the change produced).
DROP TRIGGER embeddings_generation_insert;
DROP TRIGGER embeddings_generation_update;
DROP TRIGGER embeddings_generation_delete;
CREATE TRIGGER embeddings_generation_insert AFTER INSERT ON embeddings BEGIN
  UPDATE embedding_generation SET generation = generation + 1 WHERE id = 1;
  INSERT INTO embedding_changes (generation, embedding_id, owner_kind, owner_id)
  SELECT generation, NEW.id, NEW.owner_kind, NEW.owner_id FROM embedding_generation
  WHERE id = 1 AND NEW.id < (SELECT max(id) FROM embeddings);
END;
CREATE TRIGGER embeddings_generation_update AFTER UPDATE ON embeddings BEGIN
  UPDATE embedding_generation SET generation = generation + 1 WHERE id = 1;
  INSERT INTO embedding_changes (generation, embedding_id, owner_kind, owner_id)
  SELECT generation, OLD.id, OLD.owner_kind, OLD.owner_id FROM embedding_generation WHERE id = 1;
  INSERT INTO embedding_changes (generation, embedding_id, owner_kind, owner_id)
  SELECT generation, NEW.id, NEW.owner_kind, NEW.owner_id FROM embedding_generation
  WHERE id = 1 AND (NEW.id, NEW.owner_kind, NEW.owner_id) IS NOT (OLD.id, OLD.owner_kind, OLD.owner_id);
END;
CREATE TRIGGER embeddings_generation_delete AFTER DELETE ON embeddings BEGIN
  UPDATE embedding_generation SET generation = generation + 1 WHERE id = 1;
  INSERT INTO embedding_changes (generation, embedding_id, owner_kind, owner_id)
  SELECT generation, OLD.id, OLD.owner_kind, OLD.owner_id FROM embedding_generation WHERE id = 1;
END;
