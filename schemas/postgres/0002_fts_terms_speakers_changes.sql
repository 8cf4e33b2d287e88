-- Engram schema for PostgreSQL, migration 2: what SQLite's migrations 4 and 5 brought.
--
-- 1. Keyword indexes of the very terms SQLite indexes (SQLite migration 4). The store writes
--    FTSText.indexText of each row in `fts_text`: ASCII words lowercased and reduced to their
--    English (Porter2) stem by EnglishStemmer, other words as they are, CJK runs as unigrams
--    and bigrams, and for a turn its UTC day first ("8 may 2023") and its speaker's name. So
--    PostgreSQL's own stemmer is no longer used: the `engram_terms` configuration only splits
--    the terms, folds accents (unaccent) and case, as FTS5's `unicode61 remove_diacritics 2`
--    does over the same text. Queries pass PostgresFullText.queryTermsJSON (FTSQuery's terms:
--    stemmed the same way) to engram_tsquery(json). `fts_cjk` and the `engram` configuration
--    of migration 1 go. No store wrote to a migration-1 database, but rows written there by
--    hand keep their text (lowercased, not stemmed) until `rebuildFTS` writes their terms.
-- 2. Speakers (SQLite migration 5): an index of each user's speakers, read by a loose index
--    scan (one seek per name) instead of every turn.
-- 3. The embedding change log (SQLite migration 5), per user: every change of a user's
--    embeddings (appends too: concurrent writers commit ids out of order, so "above the
--    highest id" does not mean "new" here) is logged with the generation it produced and the
--    embedding id and owner it touched (an update that moves a row logs both). A vector index
--    loaded at generation G is brought up to date from the entries after G. Entries at or
--    below the user's meta 'embedding_changes_floor' (0 when absent) were pruned.
-- 4. Ids are per user: a row's key is (user_scope, id), so one user's export can be imported
--    into another user of the same database with its ids (ids drawn by the database still
--    come from one sequence per table and are never reused). Foreign keys are deferrable,
--    so an import may check them at commit (as SQLite's `defer_foreign_keys`).
-- Applied as one transaction.

CREATE TEXT SEARCH CONFIGURATION engram_terms (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION engram_terms
  ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part, numword, numhword,
    hword_numpart
  WITH unaccent, simple;

CREATE OR REPLACE FUNCTION engram_tsquery(terms json) RETURNS tsquery
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT engram_tsquery_or(phraseto_tsquery('engram_terms', term)) FROM json_array_elements_text(terms) AS term
$$;

-- Dropping a column drops its index too.
ALTER TABLE messages DROP COLUMN search, DROP COLUMN fts_cjk, ADD COLUMN fts_text text;
ALTER TABLE memories DROP COLUMN search, DROP COLUMN fts_cjk, ADD COLUMN fts_text text;
ALTER TABLE summaries DROP COLUMN search, DROP COLUMN fts_cjk, ADD COLUMN fts_text text;
UPDATE messages SET fts_text = lower(coalesce(speaker || ': ', '') || content);
UPDATE memories SET fts_text = lower(content);
UPDATE summaries SET fts_text = lower(content);
ALTER TABLE messages ALTER COLUMN fts_text SET NOT NULL,
  ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('engram_terms'::regconfig, fts_text)) STORED;
ALTER TABLE memories ALTER COLUMN fts_text SET NOT NULL,
  ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('engram_terms'::regconfig, fts_text)) STORED;
ALTER TABLE summaries ALTER COLUMN fts_text SET NOT NULL,
  ADD COLUMN search tsvector GENERATED ALWAYS AS (to_tsvector('engram_terms'::regconfig, fts_text)) STORED;
CREATE INDEX messages_search ON messages USING gin (user_scope, search);
CREATE INDEX memories_search ON memories USING gin (user_scope, search);
CREATE INDEX summaries_search ON summaries USING gin (user_scope, search);

DROP TEXT SEARCH CONFIGURATION engram;
DROP TEXT SEARCH DICTIONARY engram_stem;

CREATE INDEX messages_speaker ON messages (user_scope, speaker) WHERE speaker IS NOT NULL;

CREATE TABLE embedding_changes (
  seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_scope   text NOT NULL CHECK (length(user_scope) BETWEEN 1 AND 256),
  generation   bigint NOT NULL,
  embedding_id bigint NOT NULL,
  owner_kind   text NOT NULL,
  owner_id     bigint NOT NULL
);
CREATE INDEX embedding_changes_generation ON embedding_changes (user_scope, generation);

-- One bump per user and statement, the changed rows logged with it, one notification per
-- user. The generation row stays locked until the transaction ends, so one user's
-- generations follow the order in which their writes commit.
CREATE OR REPLACE FUNCTION engram_embeddings_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  scope text;
  current bigint;
BEGIN
  FOR scope, current IN
    INSERT INTO embedding_generation AS g (user_scope, generation)
    SELECT DISTINCT user_scope, 1 FROM changed_rows
    ON CONFLICT (user_scope) DO UPDATE SET generation = g.generation + 1
    RETURNING g.user_scope, g.generation
  LOOP
    INSERT INTO embedding_changes (user_scope, generation, embedding_id, owner_kind, owner_id)
    SELECT scope, current, r.id, r.owner_kind, r.owner_id FROM changed_rows r WHERE r.user_scope = scope;
    PERFORM pg_notify('engram_embeddings', current::text || ':' || scope);
  END LOOP;
  RETURN NULL;
END
$$;

-- An update logs the rows as they were and, where they moved, as they are.
CREATE FUNCTION engram_embeddings_bump_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  scope text;
  current bigint;
BEGIN
  FOR scope, current IN
    INSERT INTO embedding_generation AS g (user_scope, generation)
    SELECT DISTINCT user_scope, 1 FROM (SELECT user_scope FROM old_rows UNION SELECT user_scope FROM new_rows) u
    ON CONFLICT (user_scope) DO UPDATE SET generation = g.generation + 1
    RETURNING g.user_scope, g.generation
  LOOP
    INSERT INTO embedding_changes (user_scope, generation, embedding_id, owner_kind, owner_id)
    SELECT scope, current, r.id, r.owner_kind, r.owner_id
    FROM (SELECT id, owner_kind, owner_id FROM old_rows WHERE user_scope = scope
          UNION SELECT id, owner_kind, owner_id FROM new_rows WHERE user_scope = scope) r;
    PERFORM pg_notify('engram_embeddings', current::text || ':' || scope);
  END LOOP;
  RETURN NULL;
END
$$;
DROP TRIGGER embeddings_generation_update ON embeddings;
CREATE TRIGGER embeddings_generation_update AFTER UPDATE ON embeddings
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION engram_embeddings_bump_update();

-- Tables referenced by a foreign key keep their UNIQUE (user_scope, id) as their key.
ALTER TABLE sessions DROP CONSTRAINT sessions_pkey;
ALTER TABLE summaries DROP CONSTRAINT summaries_pkey;
ALTER TABLE messages DROP CONSTRAINT messages_pkey;
ALTER TABLE memories DROP CONSTRAINT memories_pkey;
ALTER TABLE embeddings DROP CONSTRAINT embeddings_pkey, ADD PRIMARY KEY (user_scope, id);
ALTER TABLE traces DROP CONSTRAINT traces_pkey, ADD PRIMARY KEY (user_scope, id);
ALTER TABLE pending_calls DROP CONSTRAINT pending_calls_pkey, ADD PRIMARY KEY (user_scope, id);
ALTER TABLE agent_items DROP CONSTRAINT agent_items_pkey, ADD PRIMARY KEY (user_scope, id);

DO $$
DECLARE
  fk record;
BEGIN
  FOR fk IN
    SELECT conrelid::regclass AS relation, conname FROM pg_constraint
    WHERE contype = 'f' AND connamespace = current_schema()::regnamespace
  LOOP
    EXECUTE format('ALTER TABLE %s ALTER CONSTRAINT %I DEFERRABLE INITIALLY IMMEDIATE', fk.relation, fk.conname);
  END LOOP;
END
$$;

INSERT INTO engram_schema (version, name) VALUES (2, 'fts_terms_speakers_changes');
