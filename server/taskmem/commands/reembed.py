"""`taskmem reembed`: embed every memory summary again with the configured model and record that model.

Run it after changing the embedding settings (the server refuses to start while the database holds
another model's vectors). Entries written with embedding_backend none wait in the embedding backlog,
which a server with a model embeds on its own after start-up; reembed embeds them too and empties it. It
works on the database (an SQLite file, or a postgresql:// URL) directly, in batches, with a progress bar
on stderr. Servers may keep running on the same database meanwhile (the embedding holds no lock; the
swap at the end is one short transaction), but restart them with the new settings afterwards: until then
the vectors they write are the old model's, refused when their dimension differs.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TextIO
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from taskmem.commands.progress import ProgressBar
from taskmem.config import Config, ConfigError, config_from_serve_arguments
from taskmem.providers.embeddings import Embedder, EmbeddingError, embedder_from_config
from taskmem.settings import EmbeddingSettings
from taskmem.store.memory import memory_vectors
from taskmem.store.sqlite.connection import connect, ensure_parent, migrate
from taskmem.store.engines import is_postgres


def add_reembed_arguments(parser: argparse.ArgumentParser) -> None:
    """The settings reembed reads, named as for `taskmem serve` (flags override file and environment)."""
    parser.add_argument("--config", help="YAML file of settings (or TASKMEM_CONFIG), as given to serve")
    parser.add_argument("--database", help="SQLite file (default data/taskmem.db) or postgresql:// URL")
    parser.add_argument("--embedding-backend", choices=("builtin", "openai"),
                        help="the model to embed with (default: the configured one)")
    parser.add_argument("--embedding-url", help="openai embedding backend: the endpoint's base URL")
    parser.add_argument("--embedding-model", help="openai embedding backend: the model name")
    parser.add_argument("--embedding-dimension", help="openai embedding backend: the vector dimension")
    parser.add_argument("--batch-size", type=int, default=256, metavar="N",
                        help="summaries per batch written to the new index (default 256)")


def run_reembed(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Exit status 0 when the vectors were rebuilt, 2 for a configuration problem, 1 when embedding failed."""
    try:
        config = config_from_serve_arguments(args)
        embedder = embedder_from_config(EmbeddingSettings.of(config))
    except ConfigError as error:
        print(f"taskmem reembed: {error}", file=err)
        return 2
    if embedder is None:
        print("taskmem reembed: embedding_backend is none, so there is no model to embed with;"
              " set embedding_backend to builtin or openai", file=err)
        return 2
    try:
        count = asyncio.run(_reembed(config, embedder, max(1, args.batch_size), err))
    except EmbeddingError as error:
        print(f"\ntaskmem reembed: {error}; the old vectors are unchanged", file=err)
        return 1
    print(f"re-embedded {count} memory entries with {embedder.model_name} ({embedder.dimension} dimensions)"
          f" in {_shown(config.database)}", file=out)
    return 0


def _shown(database: str) -> str:
    """The database as printed: a PostgreSQL URL without its password."""
    if not is_postgres(database):
        return database
    parts = urlsplit(database)
    if parts.password is None:
        return database
    return urlunsplit(parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@", 1)))


async def _reembed(config: Config, embedder: Embedder, batch: int, err: TextIO) -> int:
    """The database work runs in a worker thread; each batch's embedding is awaited on this loop
    (the builtin model runs in its own executor, an endpoint over httpx)."""
    loop = asyncio.get_running_loop()

    def embed(texts: list[str]) -> np.ndarray:
        return asyncio.run_coroutine_threadsafe(embedder.embed(texts), loop).result()

    def work_on_postgres() -> int:
        from taskmem.store.postgres import connection as postgres
        from taskmem.store.postgres import memory_index

        with postgres.connect(config.database) as connection:
            postgres.migrate(connection)
            bar = ProgressBar(err, "reembed")
            done = memory_index.rebuild(connection, embedder.model_name, embedder.dimension, embed, bar, batch)
            bar.finish()
            return done

    def work() -> int:
        if is_postgres(config.database):
            return work_on_postgres()
        ensure_parent(config.database)
        connection = connect(config.database)
        try:
            migrate(connection)
            bar = ProgressBar(err, "reembed")
            done = memory_vectors.rebuild(connection, embedder.model_name, embedder.dimension, embed, bar, batch)
            bar.finish()
            return done
        finally:
            connection.close()

    return await asyncio.to_thread(work)
