-- Engram schema, migration 13: reserved for another branch's migration of issue 47 (merged
-- beside routines, migration 14). This placeholder keeps the numbers contiguous on the
-- routines branch; on merge the other branch's 0013 replaces it (delete this file).
SELECT 1;
