-- Engram schema, migration 6: users.
-- Every row of the memory belongs to one user (`user_id`); the engine opens a memory for one
-- user (`--user ID`, `$ENGRAM_USER`, `EngramConfiguration.user`) and every query it runs
-- reads and writes only that user's rows. Rows from before this migration belong to the
-- default user, 'default'. `memories.scope_user` is unchanged: a label inside one user's
-- memory (docs/users.md).
--
-- Ids stay global (one sequence per table), so an id names one row of one user; every
-- query by id also checks the user. Session external ids and the keys of preferences and
-- skill_state are unique per user: sessions, preferences and skill_state are rebuilt with
-- those keys (the migrator turns foreign keys off while migrations run, so dropping the old
-- sessions table runs no ON DELETE action; references are checked before commit).
-- The embedding generation stays one counter for the file: a write of any user moves it.

ALTER TABLE messages ADD COLUMN user_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE summaries ADD COLUMN user_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE memories ADD COLUMN user_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE embeddings ADD COLUMN user_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE traces ADD COLUMN user_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE pending_calls ADD COLUMN user_id TEXT NOT NULL DEFAULT 'default';
ALTER TABLE agent_items ADD COLUMN user_id TEXT NOT NULL DEFAULT 'default';

CREATE TABLE sessions_new (
  id          INTEGER PRIMARY KEY,
  external_id TEXT,
  title       TEXT,
  started_at  INTEGER NOT NULL,
  ended_at    INTEGER,
  metadata    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
  user_id     TEXT NOT NULL DEFAULT 'default',
  UNIQUE (user_id, external_id)
);
INSERT INTO sessions_new (id, external_id, title, started_at, ended_at, metadata, user_id)
SELECT id, external_id, title, started_at, ended_at, metadata, 'default' FROM sessions ORDER BY id;
DROP TABLE sessions;
ALTER TABLE sessions_new RENAME TO sessions;

-- The key's columns come first: SQLite 3.40's integrity_check misreads NOT NULL columns of
-- a WITHOUT ROWID table declared before its primary key's columns as NULL.
CREATE TABLE preferences_new (
  user_id    TEXT NOT NULL DEFAULT 'default',
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  pinned     INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, key)
) WITHOUT ROWID;
INSERT INTO preferences_new (key, value, pinned, updated_at, user_id)
SELECT key, value, pinned, updated_at, 'default' FROM preferences;
DROP TABLE preferences;
ALTER TABLE preferences_new RENAME TO preferences;

CREATE TABLE skill_state_new (
  user_id    TEXT NOT NULL DEFAULT 'default',
  skill_id   TEXT NOT NULL,
  enabled    INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, skill_id)
) WITHOUT ROWID;
INSERT INTO skill_state_new (skill_id, enabled, updated_at, user_id)
SELECT skill_id, enabled, updated_at, 'default' FROM skill_state;
DROP TABLE skill_state;
ALTER TABLE skill_state_new RENAME TO skill_state;

-- Per-user access paths: listings and counts in id order, the speaker skip scan, sessions
-- by title, embeddings by owner kind.
CREATE INDEX messages_user ON messages(user_id, id);
CREATE INDEX summaries_user ON summaries(user_id, id);
CREATE INDEX memories_user ON memories(user_id, id);
CREATE INDEX embeddings_user ON embeddings(user_id, owner_kind, owner_id);
CREATE INDEX sessions_user_title ON sessions(user_id, title);
DROP INDEX IF EXISTS messages_speaker;
CREATE INDEX messages_speaker ON messages(user_id, speaker) WHERE speaker IS NOT NULL;
CREATE INDEX agent_items_user ON agent_items(user_id, kind, due_at);
CREATE INDEX traces_user ON traces(user_id, execution_id, step);
CREATE INDEX pending_calls_user ON pending_calls(user_id, status);
