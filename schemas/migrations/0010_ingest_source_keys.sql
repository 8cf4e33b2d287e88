-- Engram schema, migration 10: ingest (and remember) is idempotent, ingest resumable.
-- `source_key` is a 64-bit key of a turn read from a file: a hash of the format's own
-- message id when it has one, else of the session, time, speaker, role, text and the
-- how-many-th such turn it is. An ingest skips the turns whose key is stored, so ingesting
-- the same export twice adds nothing and a later, cumulative export adds only its new turns;
-- an ingest stopped part way keeps what it committed and the next run completes it. Turns
-- the agent or `conversation_append` store have none (NULL).
ALTER TABLE messages ADD COLUMN source_key INTEGER;
CREATE UNIQUE INDEX messages_source_key ON messages(user_id, source_key) WHERE source_key IS NOT NULL;
-- `remember` of a text already stored returns the stored memory: it is found by the first
-- 64 characters of its text (an expression index on a built-in function, so any SQLite can
-- write the table), then compared whole.
CREATE INDEX memories_content_prefix ON memories(user_id, substr(content, 1, 64));
