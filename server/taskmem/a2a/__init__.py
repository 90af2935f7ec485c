"""`taskmem a2a`: taskmem's own tasks over A2A (JSON-RPC and HTTP+JSON through the a2a-sdk routes)."""
