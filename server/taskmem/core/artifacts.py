"""Artifacts: files and outputs a task produced, with the size and sha256 they had when registered."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import re

from taskmem.core.errors import InvalidArgument


class ArtifactType(enum.StrEnum):
    FILE = "ARTIFACT_TYPE_FILE"
    PATCH = "ARTIFACT_TYPE_PATCH"
    TEST = "ARTIFACT_TYPE_TEST"
    DOCUMENT = "ARTIFACT_TYPE_DOCUMENT"
    CONFIG = "ARTIFACT_TYPE_CONFIG"


@dataclasses.dataclass(frozen=True)
class Artifact:
    namespace: str
    id: str
    task_id: str
    agent_id: str
    type: ArtifactType
    path: str
    description: str
    size_bytes: int | None
    sha256: str
    created_at: int


class ChecksumMismatch(InvalidArgument):
    reason = "ERROR_REASON_CHECKSUM_MISMATCH"


_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def checked_digest(content: bytes | None, sha256: str, size_bytes: int | None) -> tuple[str, int | None]:
    """(sha256, size) of an artifact: computed from the content when sent, and then any given value
    must agree; without content the given values are kept (sha256 as 64 lowercase hex digits)."""
    sha256 = sha256.strip().lower()
    if sha256 and not _SHA256.match(sha256):
        raise InvalidArgument("sha256", "must be 64 hexadecimal digits")
    if content is None:
        return sha256, size_bytes
    actual = hashlib.sha256(content).hexdigest()
    if sha256 and sha256 != actual:
        raise ChecksumMismatch("sha256", f"is {sha256} but the content's sha256 is {actual}")
    if size_bytes is not None and size_bytes != len(content):
        raise ChecksumMismatch("size_bytes", f"is {size_bytes} but the content is {len(content)} bytes")
    return actual, len(content)
