-- Working memory is durable (issue 12): every acknowledged PutWorkingMemory is a committed row, read back on
-- each GetWorkingMemory, instead of a server-memory map snapshotted at graceful shutdown (lost on a crash).
-- The snapshot table already holds one JSON document per (namespace, agent_id): it becomes the store.
ALTER TABLE working_memory_snapshots RENAME TO working_memories;
