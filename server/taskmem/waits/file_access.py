"""Reading a file wait's target without ever leaving its namespace's roots.

wait_file_roots binds folders to namespaces (WaitFileRoots): an entry "NAME=PATH" is namespace NAME's
alone; an entry "PATH" gives every namespace its own folder PATH/<namespace>. A namespace's file waits
read only below its own roots (FileRoots), checked when a wait is created and again at every look.

No check-then-open: the path is walked from an open descriptor of its root one
component at a time with openat(O_NOFOLLOW), so a symbolic link anywhere below the
root is refused at the moment it is met and a link flipped between two looks cannot
redirect a read. What is finally opened is checked on its descriptor (fstat): only a
regular file with a single link (a hard link could name a file outside the root) or a
directory. The server's database folder is never entered, whichever root holds it.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import posixpath
import stat
from collections.abc import Iterable

from taskmem.config import ConfigError
from taskmem.core.waits import is_inside

_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class Refused(Exception):
    """The target cannot be read safely (a link, a hard-linked file, the database): the wait fails."""


class Missing(Exception):
    """The target does not exist yet: look again later."""


@dataclasses.dataclass(frozen=True)
class WaitFileRoots:
    """wait_file_roots as configured: which folders each namespace's file waits may read."""

    shared: tuple[str, ...]  # "PATH": namespace N reads PATH/N
    named: tuple[tuple[str, str], ...]  # "N=PATH": (N, PATH), namespace N's alone
    database: str

    @classmethod
    def parse(cls, entries: Iterable[str], database: str) -> WaitFileRoots:
        """An entry is NAME=PATH when an "=" comes before any "/", else a PATH shared out by namespace."""
        shared: list[str] = []
        named: list[tuple[str, str]] = []
        for entry in entries:
            name, equals, path = entry.partition("=")
            if not equals or "/" in name:
                shared.append(entry)
            elif not name or not path:
                raise ConfigError(f"wait_file_roots: {entry!r} is not NAMESPACE=PATH")
            else:
                named.append((name, path))
        return cls(tuple(shared), tuple(named), database)

    def of(self, namespace: str) -> FileRoots:
        """The folders `namespace`'s file waits may read below."""
        roots = [path for name, path in self.named if name == namespace]
        if namespace not in ("", ".", "..") and "/" not in namespace and "\0" not in namespace:
            roots += [posixpath.join(path, namespace) for path in self.shared]
        return FileRoots.build(roots, self.database, namespace)


@dataclasses.dataclass(frozen=True)
class FileRoots:
    """The folders one namespace's file waits may read below, and the database folder they may never enter."""

    roots: tuple[str, ...]  # absolute, normalised; each also under its real path when that differs
    database_folder: str
    namespace: str = ""

    @classmethod
    def build(cls, roots: Iterable[str], database: str, namespace: str = "") -> FileRoots:
        names: list[str] = []
        for root in roots:
            absolute = posixpath.normpath(os.path.abspath(root))
            for name in (absolute, os.path.realpath(absolute)):
                if name not in names:
                    names.append(name)
        return cls(tuple(names), os.path.realpath(os.path.dirname(os.path.abspath(database))), namespace)

    def root_of(self, path: str) -> str | None:
        """The deepest configured root that `path` (absolute, normalised) lies below, lexically."""
        inside = [root for root in self.roots if is_inside(root, path)]
        return max(inside, key=len) if inside else None

    def _forbidden(self) -> tuple[int, int] | None:
        try:
            info = os.stat(self.database_folder)
        except OSError:
            return None
        return info.st_dev, info.st_ino

    def read(self, path: str, limit: int) -> bytes | None:
        """The first `limit` bytes of the regular file at `path`, or None when it is a directory.

        Raises Missing, Refused, or OSError for anything unexpected (the scheduler retries those).
        """
        root = self.root_of(path)
        if root is None:
            raise Refused(f"{path} is not below a wait_file_roots folder of namespace {self.namespace!r}")
        forbidden = self._forbidden()
        parts = [part for part in posixpath.relpath(path, root).split("/") if part not in ("", ".")]
        if ".." in parts:
            raise Refused(f"{path} climbs out of its root")
        fd = os.open(root, _DIRECTORY_FLAGS & ~os.O_NOFOLLOW)  # the root itself is the operator's, links and all
        try:
            self._check_not_database(fd, forbidden, root)
            for index, part in enumerate(parts):
                last = index == len(parts) - 1
                try:
                    child = os.open(part, _FILE_FLAGS if last else _DIRECTORY_FLAGS, dir_fd=fd)
                except OSError as error:
                    raise self._explain(error, fd, part, path) from None
                os.close(fd)
                fd = child
                self._check_not_database(fd, forbidden, path)
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                return None
            if not stat.S_ISREG(info.st_mode):
                raise Refused(f"{path} is not a regular file")
            if info.st_nlink != 1:
                raise Refused(f"{path} has {info.st_nlink} hard links; a hard-linked file could be one outside"
                              " the workspace, so it is not read")
            return _read_some(fd, limit)
        finally:
            os.close(fd)

    @staticmethod
    def _check_not_database(fd: int, forbidden: tuple[int, int] | None, shown: str) -> None:
        info = os.fstat(fd)
        if forbidden is not None and (info.st_dev, info.st_ino) == forbidden:
            raise Refused(f"{shown} is in the server's database folder, which file waits never read")

    @staticmethod
    def _explain(error: OSError, parent: int, part: str, path: str) -> Exception:
        if error.errno == errno.ENOENT:
            return Missing(f"{path} does not exist")
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            try:
                is_link = stat.S_ISLNK(os.stat(part, dir_fd=parent, follow_symlinks=False).st_mode)
            except OSError:
                is_link = False
            if is_link:
                return Refused(f"{path}: {part!r} is a symbolic link; file waits never follow links, which could"
                               " lead outside the workspace")
            if error.errno == errno.ENOTDIR:
                return Missing(f"{path} does not exist ({part!r} is not a directory)")
        return error


def _read_some(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
