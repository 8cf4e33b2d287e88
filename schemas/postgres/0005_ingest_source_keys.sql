-- Engram shared store, migration 5: ingest is idempotent and resumable (SQLite migration 10).
-- `source_key` is the 64-bit key of a turn read from a file; an ingest skips stored keys.
ALTER TABLE messages ADD COLUMN source_key bigint;
CREATE UNIQUE INDEX messages_source_key ON messages (user_scope, source_key) WHERE source_key IS NOT NULL;
CREATE INDEX memories_content_prefix ON memories (user_scope, left(content, 64));

INSERT INTO engram_schema (version, name) VALUES (5, 'ingest_source_keys');
