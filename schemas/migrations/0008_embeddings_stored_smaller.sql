-- Engram schema, migration 8: each embedding row stored smaller, every bit kept.
-- 1. `vector` of encoding 'f32' may hold the packed form (Swift's `PackedFloat32`): the
--    sign and mantissa bits as they are, the exponents entropy coded and +0 components a
--    code alone, lossless; at least 12 and fewer than 4 * dimension bytes, never
--    4 + dimension (1,290 instead of 1,536 for a MiniLM vector, a few hundred for a sparse
--    feature-hashing one). The length tells it from the plain form (4 * dimension) and from
--    'i8' (4 + dimension). The rows stored before are packed as they are copied
--    (`engram_pack_f32`, registered by the store on every connection); the space they
--    leave is free pages until the next VACUUM (`engram compact` runs one).
-- 2. `model` may be NULL, which stands for the database's model (meta `embedding_model`);
--    the trigger already admits no other, so each row repeated that name (38 bytes for
--    sentence-transformers/all-MiniLM-L6-v2). Rows naming the database's model take NULL.
-- Together they fit three MiniLM rows in a 4 KiB page instead of two (six in 8 KiB instead
-- of five).
-- SQLite cannot change a CHECK constraint or NOT NULL in place: the table is rebuilt with
-- the same columns in the same order, ids, index and triggers. Copying fires no trigger, so
-- the embedding generation, its change log and any vector snapshot stay valid. The
-- triggers that delete an item's embedding name the table: they are dropped first (a
-- rename checks every trigger) and created again as they were.

DROP TRIGGER messages_embedding_delete;
DROP TRIGGER memories_embedding_delete;
DROP TRIGGER summaries_embedding_delete;

CREATE TABLE embeddings_new (
  id         INTEGER PRIMARY KEY,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('message', 'memory', 'summary')),
  owner_id   INTEGER NOT NULL,
  model      TEXT,
  dimension  INTEGER NOT NULL CHECK (dimension > 0),
  encoding   TEXT NOT NULL DEFAULT 'f32' CHECK (encoding IN ('f32', 'i8')),
  vector     BLOB NOT NULL CHECK (
    (encoding = 'f32' AND (length(vector) = 4 * dimension
      OR (length(vector) >= 12 AND length(vector) < 4 * dimension AND length(vector) <> 4 + dimension)))
    OR (encoding = 'i8' AND length(vector) = 4 + dimension)),
  created_at INTEGER NOT NULL,
  user_id    TEXT NOT NULL DEFAULT 'default',
  UNIQUE (owner_kind, owner_id)
);
INSERT INTO embeddings_new (id, owner_kind, owner_id, model, dimension, encoding, vector, created_at, user_id)
SELECT id, owner_kind, owner_id,
  CASE WHEN model IS (SELECT value FROM meta WHERE key = 'embedding_model') THEN NULL ELSE model END,
  dimension, encoding, CASE WHEN encoding = 'f32' THEN engram_pack_f32(vector, dimension) ELSE vector END,
  created_at, user_id
FROM embeddings ORDER BY id;
DROP TABLE embeddings;
ALTER TABLE embeddings_new RENAME TO embeddings;
CREATE INDEX embeddings_user ON embeddings(user_id);

CREATE TRIGGER messages_embedding_delete AFTER DELETE ON messages BEGIN
  DELETE FROM embeddings WHERE owner_kind = 'message' AND owner_id = OLD.id;
END;
CREATE TRIGGER memories_embedding_delete AFTER DELETE ON memories BEGIN
  DELETE FROM embeddings WHERE owner_kind = 'memory' AND owner_id = OLD.id;
END;
CREATE TRIGGER summaries_embedding_delete AFTER DELETE ON summaries BEGIN
  DELETE FROM embeddings WHERE owner_kind = 'summary' AND owner_id = OLD.id;
END;

CREATE TRIGGER embeddings_model_check BEFORE INSERT ON embeddings
WHEN (NEW.model IS NOT NULL AND NEW.model IS NOT (SELECT value FROM meta WHERE key = 'embedding_model'))
  OR CAST(NEW.dimension AS TEXT) IS NOT (SELECT value FROM meta WHERE key = 'embedding_dimension')
BEGIN
  SELECT RAISE(ABORT, 'engram: embedding model or dimension does not match the database');
END;
CREATE TRIGGER embeddings_model_check_update BEFORE UPDATE OF model, dimension, encoding, vector ON embeddings
WHEN (NEW.model IS NOT NULL AND NEW.model IS NOT (SELECT value FROM meta WHERE key = 'embedding_model'))
  OR CAST(NEW.dimension AS TEXT) IS NOT (SELECT value FROM meta WHERE key = 'embedding_dimension')
BEGIN
  SELECT RAISE(ABORT, 'engram: embedding model or dimension does not match the database');
END;
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
