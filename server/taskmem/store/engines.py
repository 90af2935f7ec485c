"""The one place that picks a storage engine from the database setting: a postgresql:// URL is the
PostgreSQL engine (several replicas on one database), anything else an SQLite file (the embedded default).

Outside the port (storage.py) so the port depends on no engine while the engines depend on it; each
engine is imported only when used.
"""

from __future__ import annotations

from taskmem.store.storage import PayloadEncoder, Storage


def is_postgres(database: str) -> bool:
    """Whether the database setting names a PostgreSQL database (else it is an SQLite file)."""
    return database.startswith(("postgresql://", "postgres://"))


def shipped_migrations(database: str) -> list[tuple[int, str, str]]:
    """(number, name, sql) of every migration this code ships for the database's engine, in order."""
    if is_postgres(database):
        from taskmem.store.postgres import connection as postgres

        return postgres.migrations()
    from taskmem.store.sqlite import connection as sqlite

    return sqlite.migrations()


def apply_migrations(database: str) -> list[str]:
    """Bring the database's schema up to date (creating an SQLite file if needed); returns the migrations
    applied. Servers do this themselves at start; `taskmem migrate` does it ahead of a rollout."""
    if is_postgres(database):
        from taskmem.store.postgres import connection as postgres

        with postgres.connect(database) as opened:
            return postgres.migrate(opened)
    from taskmem.store.sqlite import connection as sqlite

    sqlite.ensure_parent(database)
    opened_file = sqlite.connect(database)
    try:
        return sqlite.migrate(opened_file)
    finally:
        opened_file.close()


async def open_storage(database: str, encode: PayloadEncoder, *, queue_size: int = 10_000, batch_size: int = 512,
                       readers: int = 2, synchronous: str = "FULL") -> Storage:
    """Open (creating and migrating as needed) the database the setting names: a postgresql:// URL, or
    an SQLite file."""
    if is_postgres(database):
        from taskmem.store.postgres.storage import PostgresStorage

        return await PostgresStorage.open_url(database, encode, queue_size=queue_size, batch_size=batch_size,
                                              readers=max(readers, 4))
    from taskmem.store.sqlite.storage import SqliteStorage

    return await SqliteStorage.open_file(database, encode, queue_size=queue_size, batch_size=batch_size,
                                         readers=readers, synchronous=synchronous)
