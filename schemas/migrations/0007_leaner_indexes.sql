-- Engram schema, migration 7: fewer, leaner indexes (bytes on disk per turn).
-- Every index costs at least one page (8 KiB) even on an empty table; a LoCoMo-size memory
-- (~550 turns) pays ~15 bytes per turn for each. Measured with `engram-bench locomo`
-- (storage.tables_bytes_per_turn) and checked with EXPLAIN QUERY PLAN on the store's queries
-- (StoreSchemaTests):
--
-- 1. Indexes of the agent's tables. Traces are read by execution, per user (traces_user, from
--    migration 6, serves that; traces_execution is redundant). Pending calls and agent items
--    are a handful of rows (confirmations waiting, reminders and notes): read in id order with
--    the user and status or kind checked on each row, they need no index at all.
DROP INDEX traces_execution;
DROP INDEX pending_calls_status;
DROP INDEX pending_calls_user;
DROP INDEX agent_items_kind;
DROP INDEX agent_items_user;

-- 2. Indexes no query uses: sessions by title, memories by kind (memories are read per user,
--    through memories_user), summaries by session (compaction finds sessions through their
--    turns; the ON DELETE CASCADE of a deleted session scans the summaries, which are few),
--    and turns by time alone (every query of turns names a user: the most recent turns are
--    read through messages_user and sorted, as they already were).
DROP INDEX sessions_user_title;
DROP INDEX memories_kind;
DROP INDEX summaries_session;
DROP INDEX messages_time;

-- 3. A user's embeddings by the user alone: counts, the highest id and deletions per user
--    need nothing more, and an owner is found through the (owner_kind, owner_id) key.
DROP INDEX embeddings_user;
CREATE INDEX embeddings_user ON embeddings(user_id);

-- 4. The change log is pruned whenever a snapshot is written and holds only the non-append
--    changes since: it is read whole, without an index.
DROP INDEX embedding_changes_generation;

-- 5. Known speakers from a table of names with their turn counts, kept by triggers, instead of
--    an index holding one entry per turn (3 pages at 550 turns, 600 at 100,000).
DROP INDEX messages_speaker;
CREATE TABLE speakers (
  user_id TEXT NOT NULL,
  speaker TEXT NOT NULL,
  turns   INTEGER NOT NULL CHECK (turns > 0),
  PRIMARY KEY (user_id, speaker)
) WITHOUT ROWID;
INSERT INTO speakers (user_id, speaker, turns)
SELECT user_id, speaker, count(*) FROM messages WHERE speaker IS NOT NULL GROUP BY user_id, speaker;
CREATE TRIGGER messages_speaker_insert AFTER INSERT ON messages WHEN NEW.speaker IS NOT NULL BEGIN
  INSERT INTO speakers (user_id, speaker, turns) VALUES (NEW.user_id, NEW.speaker, 1)
  ON CONFLICT (user_id, speaker) DO UPDATE SET turns = turns + 1;
END;
CREATE TRIGGER messages_speaker_delete AFTER DELETE ON messages WHEN OLD.speaker IS NOT NULL BEGIN
  DELETE FROM speakers WHERE user_id = OLD.user_id AND speaker = OLD.speaker AND turns = 1;
  UPDATE speakers SET turns = turns - 1 WHERE user_id = OLD.user_id AND speaker = OLD.speaker;
END;
CREATE TRIGGER messages_speaker_update AFTER UPDATE OF speaker, user_id ON messages
WHEN OLD.speaker IS NOT NEW.speaker OR OLD.user_id IS NOT NEW.user_id BEGIN
  DELETE FROM speakers WHERE user_id = OLD.user_id AND speaker = OLD.speaker AND turns = 1;
  UPDATE speakers SET turns = turns - 1 WHERE user_id = OLD.user_id AND speaker = OLD.speaker;
  INSERT INTO speakers (user_id, speaker, turns) SELECT NEW.user_id, NEW.speaker, 1 WHERE NEW.speaker IS NOT NULL
  ON CONFLICT (user_id, speaker) DO UPDATE SET turns = turns + 1;
END;
