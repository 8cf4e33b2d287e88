-- Engram schema, migration 14: routines, stored named plans (docs/requests.md "Routines").
-- A routine is a name the user says and the requests it stands for: `steps` is a JSON array
-- of {"text": request text, "skill": the skill it routed to when saved (or null)}; each text
-- is routed again when the routine runs. `name_key` is the name folded (lower case, single
-- spaces, no punctuation), so "Evening Wrap Up" and "evening wrap up!" are one routine.
CREATE TABLE routines (
  user_id    TEXT NOT NULL DEFAULT 'default',
  name_key   TEXT NOT NULL CHECK (length(name_key) > 0),
  name       TEXT NOT NULL CHECK (length(name) > 0),
  steps      TEXT NOT NULL CHECK (json_valid(steps) AND json_type(steps) = 'array'),
  enabled    INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (user_id, name_key)
) WITHOUT ROWID;
