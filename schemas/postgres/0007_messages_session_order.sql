-- Engram shared store, migration 7: a turn's neighbours in its session found by one index
-- probe. A search reads, for each candidate turn, the turn before and the turn after it
-- (ordered by time, then id); the session index without `id` made each such read sort the
-- rest of the session (about 100 rows per candidate in a 200-turn session, two thirds of a
-- search's time). The new index ends with `id`, so both reads are one index step; it
-- replaces the old one, whose columns it starts with.
CREATE INDEX messages_session_order ON messages (user_scope, session_id, created_at, id);
DROP INDEX messages_session_time;

INSERT INTO engram_schema (version, name) VALUES (7, 'messages_session_order');
