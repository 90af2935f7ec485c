-- The exact (float32) embedding of each memory entry's summary, made by the model recorded in
-- memory_embedding_model. memory_vectors (vec0, created by the server for the recorded
-- dimension) indexes these vectors quantised to one bit per dimension for the KNN search;
-- the candidates it finds are rescored by cosine against the vectors kept here, and the
-- index is rebuilt from them when its layout changes.
CREATE TABLE memory_embeddings (
    seq INTEGER PRIMARY KEY REFERENCES memory_entries (seq),
    embedding BLOB NOT NULL
);
