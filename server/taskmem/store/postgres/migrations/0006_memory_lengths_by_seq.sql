-- The BM25 statistics of a full-text search (store/postgres/memory_index.py) count the entries searched
-- and sum their search_length. Narrowed by a tag (or relevance_to), the entries searched are the
-- namespace's entries whose seq is among the tag's rows: with only (namespace, search_length) indexed the
-- planner scanned the whole table and hash-joined the tag's rows (~32 ms at 100k entries, a tag on 10k of
-- them). Indexed by (namespace, seq) and carrying search_length, the count is an index-only merge join of
-- this index with the tags' primary key (tag, entry_seq), both in seq order (~11 ms).
-- memory_entries_lengths (0005) stays for the unfiltered count: its keys repeat, so B-tree deduplication
-- keeps it ~5× smaller (720 kB against 4 MB at 100k) and its scan twice as fast (5 ms against 12).
CREATE INDEX IF NOT EXISTS memory_entries_lengths_by_seq ON memory_entries (namespace, seq) INCLUDE (search_length);
