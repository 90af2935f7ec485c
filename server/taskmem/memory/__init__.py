"""MemoryService's engine: embedding, searching and extracting around the memory store."""
