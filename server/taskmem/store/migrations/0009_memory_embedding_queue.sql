-- Memory entries acknowledged but not embedded yet. AddMemoryEntries (and every other writer of
-- memory entries) commits an entry and its row here in one transaction and answers at once; the
-- server's background pass (taskmem/memory/embedding_backlog.py) embeds the queued summaries in seq
-- order and, in one transaction, writes their vectors and deletes their rows. So a crash loses no
-- entry and a restart resumes the backlog where it stopped; `taskmem reembed` empties it.
CREATE TABLE memory_embedding_queue (
    seq INTEGER PRIMARY KEY REFERENCES memory_entries (seq)
);

-- Entries written without a vector before this table existed (embedding_backend none) join it.
INSERT INTO memory_embedding_queue (seq)
    SELECT seq FROM memory_entries WHERE seq NOT IN (SELECT seq FROM memory_embeddings);
