"""The API keys a server accepts: those of its configuration, and those of a keys file it re-reads as it changes.

The keys file (setting keys_file) is YAML:

    keys:
      - id: ops-bot              # public: events and logs name this, never the secret
        secret: "…"              # the bearer token
        role: writer             # reader | writer | admin (required here)
        namespaces: [team-a]     # the first is the default (default: [default])
        tasks:                   # optional: scope the key to these tasks
          created: true          #   the tasks it creates
          ids: [t_…]             #   the tasks it is given
          labels: [build]        #   the tasks whose metadata "labels" list holds one of these

It is read every RELOAD_SECONDS. A change takes effect on the next call of every front door, and each open
stream of a key that was removed or changed is ended, so its client reconnects under the new entry (or is
refused). A file that cannot be read or parsed leaves the keys as they were (and is logged): a half-written
file never locks everyone out or lets anyone in. Keys configured the old way (api_keys) have no role in
their configuration: they keep the admin role, as they could do everything before roles existed, and an
id derived from their secret's hash.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from taskmem.config import DEFAULT_NAMESPACE, ApiKey, ConfigError
from taskmem.core.access import ROLES_BY_NAME, KeyEntry, Role, TaskScope
from taskmem.settings import AuthSettings

log = logging.getLogger(__name__)

RELOAD_SECONDS = 0.2
_KEY_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$")


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def legacy_key_id(secret: str) -> str:
    """The id of a key configured with api_keys (no id of its own): a short hash of its secret."""
    return "key-" + hashlib.sha256(secret.encode()).hexdigest()[:12]


def legacy_entry(key: ApiKey) -> KeyEntry:
    return KeyEntry(legacy_key_id(key.key), key.key, Role.ADMIN, key.namespaces)


def _strings(where: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"{where}: expected a list of non-empty strings")
    return tuple(value)


def _scope(where: str, value: Any) -> TaskScope | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: expected a mapping with created, ids and/or labels")
    unknown = set(value) - {"created", "ids", "labels"}
    if unknown:
        raise ConfigError(f"{where}: unknown field {sorted(unknown)[0]!r} (known: created, ids, labels)")
    created = value.get("created", False)
    if not isinstance(created, bool):
        raise ConfigError(f"{where}.created: expected true or false")
    return TaskScope(created, frozenset(_strings(f"{where}.ids", value.get("ids"))),
                     frozenset(_strings(f"{where}.labels", value.get("labels"))))


def parse_keys_document(text: str, source: str = "keys_file") -> tuple[KeyEntry, ...]:
    """The entries of a keys file; ConfigError naming the entry and field at fault."""
    try:
        document = yaml.safe_load(text) or {}
    except yaml.YAMLError as error:
        raise ConfigError(f"{source}: not YAML: {' '.join(str(error).split())}") from None
    if not isinstance(document, Mapping) or set(document) - {"keys"}:
        raise ConfigError(f"{source}: expected a mapping with one field, keys")
    entries = document.get("keys") or []
    if not isinstance(entries, list):
        raise ConfigError(f"{source}.keys: expected a list")
    keys: list[KeyEntry] = []
    ids: set[str] = set()
    secrets: set[str] = set()
    for position, entry in enumerate(entries):
        where = f"{source}.keys[{position}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where}: expected a mapping")
        unknown = set(entry) - {"id", "secret", "role", "namespaces", "tasks"}
        if unknown:
            raise ConfigError(f"{where}: unknown field {sorted(unknown)[0]!r}")
        key_id, secret, role = entry.get("id"), entry.get("secret"), entry.get("role")
        if not isinstance(key_id, str) or not _KEY_ID.match(key_id):
            raise ConfigError(f"{where}.id: 1-64 letters, digits or ._:@- starting with a letter or digit")
        if not isinstance(secret, str) or len(secret) < 8:
            raise ConfigError(f"{where}.secret: required, at least 8 characters")
        if role not in ROLES_BY_NAME:
            raise ConfigError(f"{where}.role: one of {', '.join(ROLES_BY_NAME)}")
        if key_id in ids:
            raise ConfigError(f"{where}.id: {key_id!r} is used twice")
        if secret in secrets:
            raise ConfigError(f"{where}.secret: the same secret is used twice")
        ids.add(key_id)
        secrets.add(secret)
        namespaces = _strings(f"{where}.namespaces", entry.get("namespaces")) or (DEFAULT_NAMESPACE,)
        keys.append(KeyEntry(key_id, secret, ROLES_BY_NAME[role], namespaces, _scope(f"{where}.tasks", entry.get("tasks"))))
    return tuple(keys)


class KeyRing:
    """The keys accepted now. find() is what every front door asks; watch() is how a stream learns its key
    went away."""

    def __init__(self, api_keys: tuple[ApiKey, ...] = (), admin_keys: tuple[str, ...] = (), keys_file: str = "") -> None:
        self._static = tuple(legacy_entry(key) for key in api_keys)
        self._admin = frozenset(_digest(key) for key in admin_keys)
        self._path = Path(keys_file).expanduser() if keys_file else None
        self._text: str | None = None
        self._by_digest: dict[bytes, KeyEntry] = {}
        self._by_id: dict[str, KeyEntry] = {}
        self._watchers: dict[str, set[asyncio.Event]] = {}
        self._task: asyncio.Task[None] | None = None
        self.reloads = 0
        self._install(())
        if self._path is not None:
            self._install(self._read_file())

    @classmethod
    def of(cls, auth: AuthSettings) -> KeyRing:
        return cls(auth.api_keys, auth.admin_keys, auth.keys_file)

    @property
    def open(self) -> bool:
        """True when no keys are configured at all: every caller acts in the default namespace. A keys file,
        even an empty one, means keys are checked."""
        return not self._static and self._path is None

    def find(self, token: str) -> KeyEntry | None:
        return self._by_digest.get(_digest(token)) if token else None

    def forces_waits(self, token: str) -> bool:
        """The token is one of admin_keys (it may force any wait's outcome with ResolveWait)."""
        return bool(token) and _digest(token) in self._admin

    def first_secret(self) -> str:
        """A key's secret for a process's own calls (the embedded MCP server's); empty with none."""
        for entry in self._by_id.values():
            return entry.secret
        return ""

    @contextlib.contextmanager
    def watch(self, key_id: str) -> Iterator[asyncio.Event]:
        """An event set when this key is removed or changed, while the block runs."""
        revoked = asyncio.Event()
        self._watchers.setdefault(key_id, set()).add(revoked)
        try:
            yield revoked
        finally:
            watchers = self._watchers.get(key_id)
            if watchers is not None:
                watchers.discard(revoked)
                if not watchers:
                    del self._watchers[key_id]

    def _read_file(self) -> tuple[KeyEntry, ...]:
        assert self._path is not None
        try:
            text = self._path.read_text()
        except OSError as error:
            raise ConfigError(f"keys_file: cannot read {self._path}: {error.strerror or error}") from None
        entries = parse_keys_document(text, "keys_file")
        self._text = text
        return entries

    def _install(self, entries: tuple[KeyEntry, ...]) -> None:
        by_id: dict[str, KeyEntry] = {}
        for entry in (*self._static, *entries):
            by_id.setdefault(entry.id, entry)
        before = self._by_id
        self._by_id = by_id
        self._by_digest = {_digest(entry.secret): entry for entry in by_id.values()}
        for key_id, entry in before.items():
            if by_id.get(key_id) != entry:
                for revoked in self._watchers.get(key_id, ()):
                    revoked.set()

    def reload(self) -> bool:
        """Read the keys file again; True when its keys changed. A bad file keeps the keys as they were."""
        if self._path is None:
            return False
        try:
            text = self._path.read_text()
        except OSError as error:
            log.error("keys_file: cannot read %s (%s); the keys stay as they were", self._path, error.strerror or error)
            return False
        if text == self._text:
            return False
        try:
            entries = parse_keys_document(text, "keys_file")
        except ConfigError as error:
            log.error("%s; the keys stay as they were", error)
            self._text = text  # logged once, not at every look
            return False
        self._text = text
        self._install(entries)
        self.reloads += 1
        log.info("keys_file: %d keys loaded from %s", len(entries), self._path)
        return True

    async def _follow(self) -> None:
        while True:
            await asyncio.sleep(RELOAD_SECONDS)
            self.reload()

    def start(self) -> None:
        if self._path is not None and self._task is None:
            self._task = asyncio.create_task(self._follow(), name="taskmem-keys-file")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
