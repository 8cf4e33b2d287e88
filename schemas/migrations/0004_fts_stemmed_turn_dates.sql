-- Engram schema, migration 4: keyword indexes rebuilt with English stemming and turn days.
-- engram_fts_text now writes normalized terms: ASCII words lowercased and reduced to their
-- English (Snowball Porter2) stem, other words as they are, CJK runs as unigrams and
-- bigrams; and engram_fts_text(text, time) puts the UTC day of `time` first ("8 may 2023"),
-- so a turn can be found by what it says and when. The stemming is done there, not by
-- FTS5's porter tokenizer, so queries (FTSQuery) stem exactly as the index does; the
-- tokenizer only splits, folding case and diacritics.
-- The indexes are contentless: a delete must give the very terms once inserted, so every
-- index is dropped, created anew and filled from its source table, and the triggers are
-- recreated with the new text (a turn's update trigger also watches created_at, which its
-- indexed day comes from).

DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_update;
DROP TRIGGER summaries_fts_insert;
DROP TRIGGER summaries_fts_delete;
DROP TRIGGER summaries_fts_update;
DROP TABLE messages_fts;
DROP TABLE memories_fts;
DROP TABLE summaries_fts;

CREATE VIRTUAL TABLE messages_fts USING fts5(
  body, content = '', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE memories_fts USING fts5(
  body, content = '', tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE summaries_fts USING fts5(
  body, content = '', tokenize = 'unicode61 remove_diacritics 2'
);
-- As in migration 2: merge segments in groups of 8 (less work per batched insert).
INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 8);

INSERT INTO messages_fts (rowid, body)
SELECT id, engram_fts_text(coalesce(speaker || ': ', '') || content, created_at) FROM messages ORDER BY id;
INSERT INTO memories_fts (rowid, body) SELECT id, engram_fts_text(content) FROM memories ORDER BY id;
INSERT INTO summaries_fts (rowid, body) SELECT id, engram_fts_text(content) FROM summaries ORDER BY id;

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts (rowid, body)
  VALUES (NEW.id, engram_fts_text(coalesce(NEW.speaker || ': ', '') || NEW.content, NEW.created_at));
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, body)
  VALUES ('delete', OLD.id, engram_fts_text(coalesce(OLD.speaker || ': ', '') || OLD.content, OLD.created_at));
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, speaker, created_at ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, body)
  VALUES ('delete', OLD.id, engram_fts_text(coalesce(OLD.speaker || ': ', '') || OLD.content, OLD.created_at));
  INSERT INTO messages_fts (rowid, body)
  VALUES (NEW.id, engram_fts_text(coalesce(NEW.speaker || ': ', '') || NEW.content, NEW.created_at));
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
