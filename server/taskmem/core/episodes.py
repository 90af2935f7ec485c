"""Episodes: what an agent tried for a task and what happened."""

from __future__ import annotations

import dataclasses
import enum


class EpisodeAction(enum.StrEnum):
    ATTEMPTED = "EPISODE_ACTION_ATTEMPTED"
    COMPLETED = "EPISODE_ACTION_COMPLETED"
    FAILED = "EPISODE_ACTION_FAILED"
    RETRIED = "EPISODE_ACTION_RETRIED"


@dataclasses.dataclass(frozen=True)
class Episode:
    namespace: str
    id: str
    task_id: str
    agent_id: str
    action: EpisodeAction
    approach: str
    outcome: str
    duration_us: int | None
    tokens_in: int
    tokens_out: int
    created_at: int
    # Set when retention archived it (microseconds); archived episodes are kept but listed only on request.
    archived_at: int | None = None
    expires_at: int | None = None  # from then on no read returns it (core/retention.py)
