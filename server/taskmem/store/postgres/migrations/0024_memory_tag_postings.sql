-- A full-text search narrowed to some tags ranked from the postings of its terms in the whole namespace,
-- joined to the tags' entries (store/postgres/memory_postings.ranked_narrowed): at 100k entries, a tag on
-- 10k of them, a query of three common words read 63k postings to keep 6k (p95 30 ms of the search's
-- ~35). memory_tag_postings holds each tag's own postings: one row per (tag of an entry, lexeme of the
-- entry's search tsvector), the same frequency and length as memory_postings, read index-only in seq
-- order within the tag (the same query: p95 4.7 ms). It costs a copy of a tagged entry's postings per tag.
-- Written by triggers on memory_entry_tags, in the transaction that writes or deletes the tag: an entry is
-- written before its tags and its text never changes (migration 0013), a tag is deleted before its entry
-- (memory_entry_tags references it), and tag rows are inserted and deleted, never updated.
CREATE TABLE IF NOT EXISTS memory_tag_postings (
    namespace TEXT COLLATE "C" NOT NULL,
    tag TEXT COLLATE "C" NOT NULL,
    term TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    frequency INTEGER NOT NULL,
    length INTEGER NOT NULL,
    PRIMARY KEY (namespace, tag, term, seq) INCLUDE (frequency, length)
);

CREATE OR REPLACE FUNCTION memory_tag_postings_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO memory_tag_postings (namespace, tag, term, seq, frequency, length)
        SELECT p.namespace, NEW.tag, p.term, p.seq, p.frequency, p.length
        FROM memory_entries m, memory_postings_of(ARRAY[m]) p WHERE m.seq = NEW.entry_seq;
    RETURN NULL;
END $$;

-- By the entry's own terms, so each row goes by its key (the tag alone would range over all its postings).
CREATE OR REPLACE FUNCTION memory_tag_postings_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM memory_tag_postings t USING memory_entries m, unnest(m.search) l
        WHERE m.seq = OLD.entry_seq AND t.namespace = OLD.namespace AND t.tag = OLD.tag AND t.term = l.lexeme
          AND t.seq = OLD.entry_seq;
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS memory_tag_postings_added ON memory_entry_tags;
CREATE TRIGGER memory_tag_postings_added AFTER INSERT ON memory_entry_tags
    FOR EACH ROW EXECUTE FUNCTION memory_tag_postings_added();
DROP TRIGGER IF EXISTS memory_tag_postings_removed ON memory_entry_tags;
CREATE TRIGGER memory_tag_postings_removed AFTER DELETE ON memory_entry_tags
    FOR EACH ROW EXECUTE FUNCTION memory_tag_postings_removed();

-- The tags written before this migration.
INSERT INTO memory_tag_postings (namespace, tag, term, seq, frequency, length)
    SELECT p.namespace, t.tag, p.term, p.seq, p.frequency, p.length
    FROM memory_entry_tags t JOIN memory_postings p ON p.namespace = t.namespace AND p.seq = t.entry_seq
    ON CONFLICT DO NOTHING;
