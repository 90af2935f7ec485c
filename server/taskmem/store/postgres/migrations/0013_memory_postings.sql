-- An inverted index of memory entries' full text with the BM25 statistics beside it, so a search reads the
-- postings of its rarer words and looks up the common ones only for the entries those found
-- (store/postgres/memory_index.py), instead of ranking every entry that holds any of its words.
--
-- memory_postings: one row per (entry, lexeme of its search tsvector): the lexeme's weighted frequency (a
-- summary occurrence, weight A, counts 2; a detail one, B, 1: twice ts_rank_cd under weights {0, 0, 0.5, 1},
-- the frequency the ranking used before) and the entry's search_length, so a term's postings are read
-- index-only in seq order, in the namespace or (memory_postings_by_task) within one task.
-- memory_term_counts: how many entries of a namespace hold each lexeme (a term's document frequency).
-- memory_search_totals: each namespace's entry count and summed search_length (N and the mean length).
-- All three are written by triggers on memory_entries in the transaction that writes the entries, so they
-- are exact for every writer (the replicas, `taskmem copy`); entries are never updated (a trigger refuses a
-- change of their text) and are deleted only with their rows here.
CREATE TABLE IF NOT EXISTS memory_postings (
    namespace TEXT COLLATE "C" NOT NULL,
    term TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    frequency INTEGER NOT NULL,
    length INTEGER NOT NULL,
    PRIMARY KEY (namespace, term, seq) INCLUDE (frequency, length)
);
CREATE INDEX IF NOT EXISTS memory_postings_by_task ON memory_postings (namespace, task_id, term, seq)
    INCLUDE (frequency, length);
CREATE TABLE IF NOT EXISTS memory_term_counts (
    namespace TEXT COLLATE "C" NOT NULL,
    term TEXT COLLATE "C" NOT NULL,
    entries BIGINT NOT NULL,
    PRIMARY KEY (namespace, term)
);
CREATE TABLE IF NOT EXISTS memory_search_totals (
    namespace TEXT COLLATE "C" PRIMARY KEY,
    entries BIGINT NOT NULL,
    total_length BIGINT NOT NULL
);

-- The postings of a set of entries (a statement's new or old rows).
CREATE OR REPLACE FUNCTION memory_postings_of(entries memory_entries[])
RETURNS TABLE (namespace TEXT, term TEXT, seq BIGINT, task_id TEXT, frequency INTEGER, length INTEGER)
LANGUAGE sql STABLE AS $$
    SELECT e.namespace, l.lexeme, e.seq, e.task_id,
           (SELECT coalesce(sum(CASE w WHEN 'A' THEN 2 WHEN 'B' THEN 1 ELSE 0 END), 0)::int FROM unnest(l.weights) w),
           e.search_length
    FROM unnest(entries) e, unnest(e.search) l
$$;

-- Statement-level: one upsert per distinct term of the statement's entries, in term order (two replicas'
-- batches take the rows' locks in the same order; a deadlock left is retried by the writer, commit.py).
CREATE OR REPLACE FUNCTION memory_postings_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH added AS (INSERT INTO memory_postings SELECT * FROM memory_postings_of(ARRAY(SELECT n::memory_entries FROM new_entries n))
                   RETURNING namespace, term)
    INSERT INTO memory_term_counts AS c (namespace, term, entries)
        SELECT a.namespace, a.term, count(*) FROM added a GROUP BY a.namespace, a.term ORDER BY a.namespace, a.term
        ON CONFLICT (namespace, term) DO UPDATE SET entries = c.entries + EXCLUDED.entries;
    INSERT INTO memory_search_totals AS t (namespace, entries, total_length)
        SELECT n.namespace, count(*), sum(n.search_length) FROM new_entries n GROUP BY n.namespace ORDER BY n.namespace
        ON CONFLICT (namespace) DO UPDATE SET entries = t.entries + EXCLUDED.entries,
                                              total_length = t.total_length + EXCLUDED.total_length;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memory_postings_removed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    removed memory_entries[] := ARRAY(SELECT o FROM old_entries o);
BEGIN
    DELETE FROM memory_postings p USING memory_postings_of(removed) r
        WHERE p.namespace = r.namespace AND p.term = r.term AND p.seq = r.seq;
    UPDATE memory_term_counts c SET entries = c.entries - r.entries
        FROM (SELECT r.namespace, r.term, count(*) AS entries FROM memory_postings_of(removed) r
              GROUP BY r.namespace, r.term) r
        WHERE c.namespace = r.namespace AND c.term = r.term;
    UPDATE memory_search_totals t SET entries = t.entries - r.entries, total_length = t.total_length - r.total_length
        FROM (SELECT o.namespace, count(*) AS entries, sum(o.search_length) AS total_length FROM old_entries o
              GROUP BY o.namespace) r
        WHERE t.namespace = r.namespace;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION memory_text_unchanged() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.namespace IS DISTINCT FROM OLD.namespace OR NEW.task_id IS DISTINCT FROM OLD.task_id
            OR NEW.summary IS DISTINCT FROM OLD.summary
            OR NEW.detail IS DISTINCT FROM OLD.detail OR NEW.seq IS DISTINCT FROM OLD.seq THEN
        RAISE EXCEPTION 'memory entries are immutable: the search postings (migration 0013) index their text';
    END IF;
    RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS memory_postings_added ON memory_entries;
CREATE TRIGGER memory_postings_added AFTER INSERT ON memory_entries
    REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION memory_postings_added();
DROP TRIGGER IF EXISTS memory_postings_removed ON memory_entries;
CREATE TRIGGER memory_postings_removed AFTER DELETE ON memory_entries
    REFERENCING OLD TABLE AS old_entries FOR EACH STATEMENT EXECUTE FUNCTION memory_postings_removed();
DROP TRIGGER IF EXISTS memory_text_unchanged ON memory_entries;
CREATE TRIGGER memory_text_unchanged BEFORE UPDATE ON memory_entries
    FOR EACH ROW EXECUTE FUNCTION memory_text_unchanged();

-- The entries written before this migration.
INSERT INTO memory_postings SELECT * FROM memory_postings_of(ARRAY(SELECT e FROM memory_entries e))
    ON CONFLICT DO NOTHING;
INSERT INTO memory_term_counts (namespace, term, entries)
    SELECT namespace, term, count(*) FROM memory_postings GROUP BY namespace, term
    ON CONFLICT (namespace, term) DO UPDATE SET entries = EXCLUDED.entries;
INSERT INTO memory_search_totals (namespace, entries, total_length)
    SELECT namespace, count(*), coalesce(sum(search_length), 0) FROM memory_entries GROUP BY namespace
    ON CONFLICT (namespace) DO UPDATE SET entries = EXCLUDED.entries, total_length = EXCLUDED.total_length;
