"""What an A2A task's messages and artifacts become in taskmem: transcript lines and registry entries."""

from __future__ import annotations

import hashlib
import json

from a2a.types.a2a_pb2 import ROLE_USER, Artifact, Message, Part, Task
from google.protobuf import json_format

from taskmem.v1 import memory_pb2, task_pb2

MAX_MESSAGE_CHARS = 100_000  # PostMessage's limit on content


def render_parts(parts: list[Part] | tuple[Part, ...]) -> str:
    """The parts as text: text verbatim, a file by its name and type, data as JSON."""
    lines: list[str] = []
    for part in parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            lines.append(part.text)
        elif kind in ("raw", "url"):
            where = part.url if kind == "url" else f"{len(part.raw)} bytes"
            lines.append(f"[file {part.filename or '(unnamed)'} {part.media_type or ''} {where}]".replace("  ", " "))
        elif kind == "data":
            lines.append(json.dumps(json_format.MessageToDict(part.data), sort_keys=True))
    return "\n".join(lines)


def transcript_role(message: Message) -> task_pb2.MessageRole.ValueType:
    return task_pb2.MESSAGE_ROLE_USER if message.role == ROLE_USER else task_pb2.MESSAGE_ROLE_AGENT


def transcript_content(message: Message) -> str:
    text = render_parts(message.parts)
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS - 1] + "…"


def new_messages(task: Task, prev: Task | None) -> list[Message]:
    """The task's messages (history, then the status message) that prev did not hold, by message_id."""
    seen = set()
    if prev is not None:
        seen = {m.message_id for m in prev.history}
        if prev.status.HasField("message"):
            seen.add(prev.status.message.message_id)
    found = list(task.history)
    if task.status.HasField("message"):
        found.append(task.status.message)
    fresh: list[Message] = []
    for message in found:
        if message.message_id not in seen and render_parts(message.parts):
            seen.add(message.message_id)
            fresh.append(message)
    return fresh


def artifact_content(artifact: Artifact) -> bytes:
    """The bytes an artifact's registry entry is checksummed over: raw file bytes, else its rendering."""
    raw = [part.raw for part in artifact.parts if part.WhichOneof("content") == "raw"]
    return b"".join(raw) if raw else render_parts(artifact.parts).encode()


def changed_artifacts(task: Task, prev: Task | None) -> list[Artifact]:
    """Artifacts that are new or whose content changed since prev (a streamed artifact grows by appends)."""
    before = {a.artifact_id: artifact_content(a) for a in prev.artifacts} if prev is not None else {}
    return [a for a in task.artifacts if before.get(a.artifact_id) != artifact_content(a)]


def artifact_type(artifact: Artifact) -> memory_pb2.ArtifactType.ValueType:
    files = any(part.WhichOneof("content") in ("raw", "url") for part in artifact.parts)
    return memory_pb2.ARTIFACT_TYPE_FILE if files else memory_pb2.ARTIFACT_TYPE_DOCUMENT


def checksum(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()
