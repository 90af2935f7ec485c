-- A full-text search narrowed to a task or to some tags ranks by BM25 over the entries it searches
-- (store/postgres/memory_postings.py), so it first counts those entries and sums their search_length.
-- The tags' rows held only (tag, entry_seq): the count joined them to memory_entries, one lookup per
-- tagged entry or a merge with the namespace's every seq (17-27 ms at 100k entries for a tag on 10k of
-- them, 58 when the entries' pages were out of shared buffers: the largest part of such a search once
-- the expired-entry check stopped scanning). Each tag row now carries its entry's namespace and
-- search_length, set from the entry as the row is written (an entry is written before its tags, and its
-- namespace and text never change: memory_text_unchanged, migration 0013), so the count is an index-only
-- scan of the tags' own rows.
ALTER TABLE memory_entry_tags ADD COLUMN IF NOT EXISTS namespace TEXT COLLATE "C";
ALTER TABLE memory_entry_tags ADD COLUMN IF NOT EXISTS search_length INTEGER;

CREATE OR REPLACE FUNCTION memory_entry_tag_lengths() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT m.namespace, m.search_length INTO NEW.namespace, NEW.search_length
        FROM memory_entries m WHERE m.seq = NEW.entry_seq;
    RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS memory_entry_tag_lengths ON memory_entry_tags;
CREATE TRIGGER memory_entry_tag_lengths BEFORE INSERT OR UPDATE ON memory_entry_tags
    FOR EACH ROW EXECUTE FUNCTION memory_entry_tag_lengths();

-- The tags written before this migration (the trigger fills each row it updates).
UPDATE memory_entry_tags SET entry_seq = entry_seq WHERE namespace IS NULL;

CREATE INDEX IF NOT EXISTS memory_entry_tags_lengths ON memory_entry_tags (namespace, tag, entry_seq)
    INCLUDE (search_length);

-- Within a task, the same count read the task's entries from the heap (memory_entries_by_task holds no
-- length): 187 ms at 1M entries, a task holding 50k of them. This index makes it index-only.
CREATE INDEX IF NOT EXISTS memory_entries_lengths_by_task ON memory_entries (namespace, task_id) INCLUDE (search_length);
