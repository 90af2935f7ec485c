-- Full text ranks by Okapi BM25 on both engines (store/postgres/memory_index.py): its length
-- normalisation needs each entry's length in words, as SQLite's index counts it (every word of summary
-- and detail, stop words included, where the tsvector keeps only the stemmed non-stop words; runs of
-- letters and digits, as FTS5's unicode61 splits "big_cat" and "e-mail" in two). A stored generated
-- column: adding it fills the existing rows, and the search sums it over the entries searched.
ALTER TABLE memory_entries ADD COLUMN IF NOT EXISTS search_length INTEGER GENERATED ALWAYS AS
    (regexp_count(summary, '[[:alnum:]]+') + regexp_count(detail, '[[:alnum:]]+')) STORED;
-- Its sum over a namespace (the entries an unfiltered search counts) read by an index-only scan: ~1.5 ms
-- at 20k entries, where the table scan took ~9 ms.
CREATE INDEX IF NOT EXISTS memory_entries_lengths ON memory_entries (namespace, search_length);
