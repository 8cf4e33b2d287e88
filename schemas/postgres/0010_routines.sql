-- Engram shared store, migration 10: routines, stored named plans (SQLite migration 14).
-- `steps` is a JSON array of {"text", "skill"}; `name_key` is the folded name.
CREATE TABLE routines (
  user_scope text NOT NULL CHECK (length(user_scope) BETWEEN 1 AND 256),
  name_key   text NOT NULL CHECK (length(name_key) > 0),
  name       text NOT NULL CHECK (length(name) > 0),
  steps      text NOT NULL,
  enabled    boolean NOT NULL DEFAULT true,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (user_scope, name_key)
);

INSERT INTO engram_schema (version, name) VALUES (10, 'routines');
