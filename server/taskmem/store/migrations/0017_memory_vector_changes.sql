-- Every change to memory_embeddings, in commit order: the in-memory vector index of each server
-- process (store/memory_vector_index.py) applies the rows past the last id it saw before each
-- search, so it stays exact whoever wrote the vectors (the backlog pass, a caller with vectors, or
-- `taskmem reembed` from another process). present: 1 a vector was stored for seq; -1 every vector
-- was replaced (reembed: the log is emptied and the index reloads). AUTOINCREMENT: ids never repeat.
CREATE TABLE memory_vector_changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL,
    present INTEGER NOT NULL
);
