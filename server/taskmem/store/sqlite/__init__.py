"""The SQLite engine: the embedded default (one file, WAL, one group-commit writer, reader threads)."""
