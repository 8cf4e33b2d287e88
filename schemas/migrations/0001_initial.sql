-- Engram schema, migration 1.
-- Conventions: times are INTEGER milliseconds since the Unix epoch (UTC); JSON columns
-- hold valid JSON text (checked); ids are INTEGER PRIMARY KEY rowids.
-- FTS tables are contentless and indexed through engram_fts_text(text), a deterministic
-- SQL function the store registers on every connection: it keeps the text as is and
-- appends CJK runs as character unigrams and bigrams so that FTS5's unicode61 tokenizer
-- can match Chinese and Japanese words of any length.

CREATE TABLE meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE sessions (
  id          INTEGER PRIMARY KEY,
  external_id TEXT UNIQUE,
  title       TEXT,
  started_at  INTEGER NOT NULL,
  ended_at    INTEGER,
  metadata    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata))
);

-- The conversation log.
CREATE TABLE messages (
  id          INTEGER PRIMARY KEY,
  session_id  INTEGER REFERENCES sessions(id) ON DELETE CASCADE,
  role        TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  speaker     TEXT,
  content     TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  token_count INTEGER NOT NULL DEFAULT 0 CHECK (token_count >= 0),
  metadata    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
  -- Set by compaction once a summary covers this turn.
  summary_id  INTEGER REFERENCES summaries(id) ON DELETE SET NULL
);
CREATE INDEX messages_session_time ON messages(session_id, created_at);
CREATE INDEX messages_time ON messages(created_at);

-- Structured summaries of spans of the conversation log.
CREATE TABLE summaries (
  id               INTEGER PRIMARY KEY,
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
CREATE INDEX summaries_session ON summaries(session_id, start_at);

CREATE TABLE memories (
  id                 INTEGER PRIMARY KEY,
  kind               TEXT NOT NULL CHECK (kind IN ('fact', 'preference', 'note', 'summary', 'event')),
  content            TEXT NOT NULL,
  importance         REAL NOT NULL DEFAULT 0.5 CHECK (importance >= 0 AND importance <= 1),
  created_at         INTEGER NOT NULL,
  updated_at         INTEGER NOT NULL,
  last_accessed_at   INTEGER,
  access_count       INTEGER NOT NULL DEFAULT 0,
  valid_from         INTEGER,
  valid_until        INTEGER,
  superseded_by      INTEGER REFERENCES memories(id) ON DELETE SET NULL,
  source_message_ids TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(source_message_ids)),
  scope_user         TEXT,
  scope_agent        TEXT,
  session_id         INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
  tags               TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
  metadata           TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata))
);
CREATE INDEX memories_kind ON memories(kind, created_at);
CREATE INDEX memories_superseded ON memories(superseded_by);

-- Embeddings of messages, memories and summaries. Every vector is tagged with the model
-- and dimension; the configured model lives in meta ('embedding_model',
-- 'embedding_dimension') and a mismatching vector is refused by the trigger below.
-- encoding 'f32': dimension little-endian float32 values. encoding 'i8' (written by
-- compaction for old turns): a little-endian float32 scale, then dimension int8 values;
-- component i is scale * value[i].
CREATE TABLE embeddings (
  id         INTEGER PRIMARY KEY,
  owner_kind TEXT NOT NULL CHECK (owner_kind IN ('message', 'memory', 'summary')),
  owner_id   INTEGER NOT NULL,
  model      TEXT NOT NULL,
  dimension  INTEGER NOT NULL CHECK (dimension > 0),
  encoding   TEXT NOT NULL DEFAULT 'f32' CHECK (encoding IN ('f32', 'i8')),
  vector     BLOB NOT NULL CHECK (
    (encoding = 'f32' AND length(vector) = 4 * dimension)
    OR (encoding = 'i8' AND length(vector) = 4 + dimension)),
  created_at INTEGER NOT NULL,
  UNIQUE (owner_kind, owner_id)
);

-- Bumped on every change to embeddings: a vector-index snapshot is valid only for the
-- generation it was written at.
CREATE TABLE embedding_generation (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  generation INTEGER NOT NULL
);
INSERT INTO embedding_generation (id, generation) VALUES (1, 0);

CREATE TRIGGER embeddings_model_check BEFORE INSERT ON embeddings
WHEN NEW.model IS NOT (SELECT value FROM meta WHERE key = 'embedding_model')
  OR CAST(NEW.dimension AS TEXT) IS NOT (SELECT value FROM meta WHERE key = 'embedding_dimension')
BEGIN
  SELECT RAISE(ABORT, 'engram: embedding model or dimension does not match the database');
END;
CREATE TRIGGER embeddings_model_check_update BEFORE UPDATE OF model, dimension, encoding, vector ON embeddings
WHEN NEW.model IS NOT (SELECT value FROM meta WHERE key = 'embedding_model')
  OR CAST(NEW.dimension AS TEXT) IS NOT (SELECT value FROM meta WHERE key = 'embedding_dimension')
BEGIN
  SELECT RAISE(ABORT, 'engram: embedding model or dimension does not match the database');
END;
CREATE TRIGGER embeddings_generation_insert AFTER INSERT ON embeddings BEGIN
  UPDATE embedding_generation SET generation = generation + 1 WHERE id = 1;
END;
CREATE TRIGGER embeddings_generation_update AFTER UPDATE ON embeddings BEGIN
  UPDATE embedding_generation SET generation = generation + 1 WHERE id = 1;
END;
CREATE TRIGGER embeddings_generation_delete AFTER DELETE ON embeddings BEGIN
  UPDATE embedding_generation SET generation = generation + 1 WHERE id = 1;
END;

-- An owner's embedding goes with it.
CREATE TRIGGER messages_embedding_delete AFTER DELETE ON messages BEGIN
  DELETE FROM embeddings WHERE owner_kind = 'message' AND owner_id = OLD.id;
END;
CREATE TRIGGER memories_embedding_delete AFTER DELETE ON memories BEGIN
  DELETE FROM embeddings WHERE owner_kind = 'memory' AND owner_id = OLD.id;
END;
CREATE TRIGGER summaries_embedding_delete AFTER DELETE ON summaries BEGIN
  DELETE FROM embeddings WHERE owner_kind = 'summary' AND owner_id = OLD.id;
END;

-- Full-text search (contentless FTS5, rowid = the owner's id). A turn is indexed with its
-- speaker's name, so "what did Ann say about ..." matches Ann's turns.
CREATE VIRTUAL TABLE messages_fts USING fts5(
  body, content = '', tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE memories_fts USING fts5(
  body, content = '', tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE summaries_fts USING fts5(
  body, content = '', tokenize = 'porter unicode61 remove_diacritics 2'
);

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

-- Key-value preferences (time zone, language, pinned preferences for prompts).
CREATE TABLE preferences (
  key        TEXT PRIMARY KEY NOT NULL,
  value      TEXT NOT NULL,
  pinned     INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE skill_state (
  skill_id   TEXT PRIMARY KEY NOT NULL,
  enabled    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;

-- One row per step the agent ran.
CREATE TABLE traces (
  id           INTEGER PRIMARY KEY,
  execution_id TEXT NOT NULL,
  step         INTEGER NOT NULL,
  skill_id     TEXT,
  arguments    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(arguments)),
  result       TEXT,
  status       TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'cancelled', 'timeout', 'pending')),
  started_at   INTEGER NOT NULL,
  duration_ms  REAL NOT NULL DEFAULT 0,
  error        TEXT
);
CREATE INDEX traces_execution ON traces(execution_id, step);

-- Side effects waiting for the user's confirmation; survive restarts.
CREATE TABLE pending_calls (
  id           INTEGER PRIMARY KEY,
  execution_id TEXT NOT NULL,
  step         INTEGER NOT NULL DEFAULT 1,
  skill_id     TEXT NOT NULL,
  arguments    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(arguments)),
  summary      TEXT NOT NULL,
  status       TEXT NOT NULL CHECK (status IN ('pending', 'confirmed', 'executed', 'cancelled', 'failed')),
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  error        TEXT
);
CREATE INDEX pending_calls_status ON pending_calls(status);

-- Reminders, calendar events and notes the agent's skills create.
CREATE TABLE agent_items (
  id         INTEGER PRIMARY KEY,
  kind       TEXT NOT NULL CHECK (kind IN ('reminder', 'event', 'note')),
  title      TEXT NOT NULL,
  body       TEXT,
  due_at     INTEGER,
  created_at INTEGER NOT NULL,
  done       INTEGER NOT NULL DEFAULT 0 CHECK (done IN (0, 1))
);
CREATE INDEX agent_items_kind ON agent_items(kind, due_at);
