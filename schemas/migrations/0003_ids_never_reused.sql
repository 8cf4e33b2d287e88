-- Engram schema, migration 3: ids are never reused.
-- Without AUTOINCREMENT SQLite gives a new row max(id) + 1, so forgetting the item with the
-- highest id hands its id to the next one: an agent still holding the old id could then
-- delete or cite the new item. AUTOINCREMENT keeps the highest id ever used per table (in
-- sqlite_sequence), so a forgotten id stays retired. SQLite cannot add AUTOINCREMENT in
-- place: messages, summaries and memories are rebuilt with the same columns, ids, indexes
-- and triggers. The contentless FTS indexes and the embeddings are keyed by those ids and
-- stay valid (dropping a table fires no DELETE trigger). Ids forgotten before this
-- migration and above every remaining id may be used once more; none after it.
--
-- Foreign keys are on while migrations run, and dropping a table performs an implicit
-- DELETE that runs foreign-key actions: dropping summaries would set messages.summary_id
-- to NULL, so those links are kept aside and restored; memories_new references itself
-- (renamed along with the table), so dropping the old memories touches nothing.

CREATE TEMP TABLE migration_message_summary AS
  SELECT id, summary_id FROM messages WHERE summary_id IS NOT NULL;

CREATE TABLE summaries_new (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id       INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
  first_message_id INTEGER,
  last_message_id  INTEGER,
  start_at         INTEGER NOT NULL,
  end_at           INTEGER NOT NULL,
  content          TEXT NOT NULL,
  structured       TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(structured)),
  generator        TEXT NOT NULL DEFAULT 'extractive',
  created_at       INTEGER NOT NULL
);
INSERT INTO summaries_new (
  id, session_id, first_message_id, last_message_id, start_at, end_at, content, structured, generator,
  created_at
)
SELECT id, session_id, first_message_id, last_message_id, start_at, end_at, content, structured, generator,
  created_at
FROM summaries ORDER BY id;
DROP TABLE summaries;
ALTER TABLE summaries_new RENAME TO summaries;
CREATE INDEX summaries_session ON summaries(session_id, start_at);
CREATE TRIGGER summaries_embedding_delete AFTER DELETE ON summaries BEGIN
  DELETE FROM embeddings WHERE owner_kind = 'summary' AND owner_id = OLD.id;
END;
CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries BEGIN
  INSERT INTO summaries_fts (rowid, body) VALUES (NEW.id, engram_fts_text(NEW.content));
END;
CREATE TRIGGER summaries_fts_delete AFTER DELETE ON summaries BEGIN
  INSERT INTO summaries_fts (summaries_fts, rowid, body)
  VALUES ('delete', OLD.id, engram_fts_text(OLD.content));
END;
CREATE TRIGGER summaries_fts_update AFTER UPDATE OF content ON summaries BEGIN
  INSERT INTO summaries_fts (summaries_fts, rowid, body)
  VALUES ('delete', OLD.id, engram_fts_text(OLD.content));
  INSERT INTO summaries_fts (rowid, body) VALUES (NEW.id, engram_fts_text(NEW.content));
END;

CREATE TABLE messages_new (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id  INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
  -- Named after the original check, so a refusal still reads
  -- "CHECK constraint failed: role IN ('system', 'user', 'assistant', 'tool')".
  role        TEXT NOT NULL
    CONSTRAINT "role IN ('system', 'user', 'assistant', 'tool')"
    CHECK (role = 'system' OR role = 'user' OR role = 'assistant' OR role = 'tool'),
  speaker     TEXT,
  content     TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  token_count INTEGER NOT NULL DEFAULT 0 CHECK (token_count >= 0),
  metadata    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
  -- Set by compaction once a summary covers this turn.
  summary_id  INTEGER REFERENCES summaries(id) ON DELETE SET NULL
);
INSERT INTO messages_new (
  id, session_id, role, speaker, content, created_at, token_count, metadata, summary_id
)
SELECT m.id, m.session_id, m.role, m.speaker, m.content, m.created_at, m.token_count, m.metadata,
  kept.summary_id
FROM messages m LEFT JOIN temp.migration_message_summary kept ON kept.id = m.id ORDER BY m.id;
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
CREATE INDEX messages_session_time ON messages(session_id, created_at);
CREATE INDEX messages_time ON messages(created_at);
CREATE TRIGGER messages_embedding_delete AFTER DELETE ON messages BEGIN
  DELETE FROM embeddings WHERE owner_kind = 'message' AND owner_id = OLD.id;
END;
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts (rowid, body)
  VALUES (NEW.id, engram_fts_text(coalesce(NEW.speaker || ': ', '') || NEW.content));
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, body)
  VALUES ('delete', OLD.id, engram_fts_text(coalesce(OLD.speaker || ': ', '') || OLD.content));
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, speaker ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, body)
  VALUES ('delete', OLD.id, engram_fts_text(coalesce(OLD.speaker || ': ', '') || OLD.content));
  INSERT INTO messages_fts (rowid, body)
  VALUES (NEW.id, engram_fts_text(coalesce(NEW.speaker || ': ', '') || NEW.content));
END;
DROP TABLE temp.migration_message_summary;

CREATE TABLE memories_new (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  kind               TEXT NOT NULL CHECK (kind IN ('fact', 'preference', 'note', 'summary', 'event')),
  content            TEXT NOT NULL,
  importance         REAL NOT NULL DEFAULT 0.5 CHECK (importance >= 0 AND importance <= 1),
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL,
  last_accessed_at   INTEGER,
  access_count       INTEGER NOT NULL DEFAULT 0,
  valid_from         INTEGER,
  valid_until        INTEGER,
  superseded_by      INTEGER REFERENCES memories_new(id) ON DELETE SET NULL,
  source_message_ids TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(source_message_ids)),
  scope_user         TEXT,
  scope_agent        TEXT,
  session_id         INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
  tags               TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
  metadata           TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata))
);
INSERT INTO memories_new (
  id, kind, content, importance, created_at, updated_at, last_accessed_at, access_count, valid_from,
  valid_until, superseded_by, source_message_ids, scope_user, scope_agent, session_id, tags, metadata
)
SELECT id, kind, content, importance, created_at, updated_at, last_accessed_at, access_count, valid_from,
  valid_until, superseded_by, source_message_ids, scope_user, scope_agent, session_id, tags, metadata
FROM memories ORDER BY id;
DROP TABLE memories;
ALTER TABLE memories_new RENAME TO memories;
CREATE INDEX memories_kind ON memories(kind, created_at);
CREATE INDEX memories_superseded ON memories(superseded_by);
CREATE TRIGGER memories_embedding_delete AFTER DELETE ON memories BEGIN
  DELETE FROM embeddings WHERE owner_kind = 'memory' AND owner_id = OLD.id;
END;
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts (rowid, body) VALUES (NEW.id, engram_fts_text(NEW.content));
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, body)
  VALUES ('delete', OLD.id, engram_fts_text(OLD.content));
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, body)
  VALUES ('delete', OLD.id, engram_fts_text(OLD.content));
  INSERT INTO memories_fts (rowid, body) VALUES (NEW.id, engram_fts_text(NEW.content));
END;
