"""Working memory (Get/PutWorkingMemory): one small document per agent, and the rules of replacing it.

Stored as a row per agent (store/memory/working_memory.py), so an acknowledged put survives
a crash and an idle agent costs no server memory. Bounded: a document of at most
max_bytes (as JSON) per agent, at most max_agents agents per namespace. Each
namespace sees only its own agents.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from taskmem.core.errors import ResourceExhausted, StaleEtag


@dataclasses.dataclass
class WorkingMemory:
    agent_id: str
    current_plan: str = ""
    active_constraints: list[str] = dataclasses.field(default_factory=list)
    task_context: dict[str, Any] = dataclasses.field(default_factory=dict)
    scratchpad: list[str] = dataclasses.field(default_factory=list)
    updated_at: int = 0
    revision: int = 0  # 0: never written

    @property
    def etag(self) -> str:
        return f'W/"{self.revision}"' if self.revision else ""

    def to_document(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> WorkingMemory:
        return cls(**{f.name: document[f.name] for f in dataclasses.fields(cls) if f.name in document})


def document_json(memory: WorkingMemory) -> str:
    return json.dumps(memory.to_document(), ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def check_size(memory: WorkingMemory, max_bytes: int) -> str:
    """The document as stored; RESOURCE_EXHAUSTED (working_memory_max_bytes) when it is too big."""
    document = document_json(memory)
    size = len(document.encode())
    if size > max_bytes:
        raise ResourceExhausted("working_memory_max_bytes", f"working memory of {memory.agent_id} is {size} bytes"
                                f" as JSON; at most {max_bytes}", field="working_memory")
    return document


def replaced(current: WorkingMemory | None, memory: WorkingMemory, etag: str, now: int, agents: int,
             max_agents: int) -> WorkingMemory:
    """The agent's next document. A non-empty etag must be the current one (AIP-154); a new agent must fit
    under working_memory_max_agents (`agents` is how many the namespace keeps now)."""
    current_etag = current.etag if current else ""
    if etag and etag != current_etag:
        raise StaleEtag(f"etag {etag} is stale: working memory of {memory.agent_id} is at "
                        f"{current_etag or 'nothing'}; read it again")
    if current is None and agents >= max_agents:
        raise ResourceExhausted("working_memory_max_agents", f"this namespace already keeps working memory for"
                                f" {agents} agents; at most {max_agents}", field="working_memory.agent_id")
    return dataclasses.replace(memory, updated_at=now, revision=(current.revision if current else 0) + 1)
