-- Engram schema for PostgreSQL, migration 3: what keyword ranking needs to score each row with
-- the SQLite store's formula (FTSRank, `engram_bm25`: BM25 with Lucene's idf, k1 1.2, b 0.4),
-- so that a keyword query ranks the same rows in the same order on both stores.
--
-- 1. `fts_length`: a row's length in terms, as FTS5 counts the tokens of the same text (the
--    terms of `fts_text` are separated by single spaces: FTSText writes words of letters and
--    digits, and CJK characters and bigrams, never a separator inside one). BM25 normalizes a
--    row's term frequency by its length against the average length of the user's rows.
-- 2. `engram_phrase_frequency(search, lexemes)`: how many times a phrase (its lexemes in
--    order, as `to_tsvector('engram_terms', term)` gives them) occurs in a row: FTS5's
--    phrase instances. A one-word phrase is its lexeme's positions; a CJK phrase (bigrams)
--    counts the positions where every next lexeme follows.
-- Applied as one transaction.

ALTER TABLE messages
  ADD COLUMN fts_length integer GENERATED ALWAYS AS (cardinality(string_to_array(fts_text, ' '))) STORED;
ALTER TABLE memories
  ADD COLUMN fts_length integer GENERATED ALWAYS AS (cardinality(string_to_array(fts_text, ' '))) STORED;
ALTER TABLE summaries
  ADD COLUMN fts_length integer GENERATED ALWAYS AS (cardinality(string_to_array(fts_text, ' '))) STORED;

CREATE FUNCTION engram_phrase_frequency(doc tsvector, lexemes text[]) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT count(*)::integer FROM unnest(doc) AS first_word, unnest(first_word.positions) AS p
  WHERE first_word.lexeme = lexemes[1] AND NOT EXISTS (
    SELECT 1 FROM generate_series(2, cardinality(lexemes)) AS i
    WHERE NOT EXISTS (
      SELECT 1 FROM unnest(doc) AS word WHERE word.lexeme = lexemes[i] AND p + i - 1 = ANY(word.positions)))
$$;

INSERT INTO engram_schema (version, name) VALUES (3, 'bm25_lengths');
