-- Engram shared store, migration 9: reserved for another branch's migration of issue 47
-- (merged beside routines, migration 10). This placeholder keeps the numbers contiguous on
-- the routines branch; on merge the other branch's 0009 replaces it (delete this file).
INSERT INTO engram_schema (version, name) VALUES (9, 'reserved');
