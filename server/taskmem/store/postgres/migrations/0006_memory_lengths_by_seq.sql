-- The BM25 statistics of a full-text search (store/postgres/memory_index.py) count the entries searched
-- and sum their search_length. Narrowed by a tag (or relevance_to), the entries searched are the
-- namespace's entries whose seq is among the tag's rows: with only (namespace, search_length) indexed the
-- planner scanned the whole table and hash-joined the tag's rows (~30-45 ms at 100k entries). Indexed by
-- (namespace, seq) and carrying search_length, the count is an index-only merge join of this index with
-- the tags' primary key (tag, entry_seq), both in seq order (~15 ms at 100k, a tag on 10k of them), and
-- the unfiltered count stays an index-only scan of the namespace's part. It replaces the 0005 index,
-- which it serves in full, so entries carry no more index than before.
CREATE INDEX IF NOT EXISTS memory_entries_lengths_by_seq ON memory_entries (namespace, seq) INCLUDE (search_length);
DROP INDEX IF EXISTS memory_entries_lengths;
