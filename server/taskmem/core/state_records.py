"""A state item as a thread stores it: the core item plus its thread, change time and conflict partners."""

from __future__ import annotations

import dataclasses

from taskmem.core.state_items import StateItem


@dataclasses.dataclass
class StoredStateItem(StateItem):
    thread_id: str = ""
    updated_at: int = 0
    conflict_with: list[str] = dataclasses.field(default_factory=list)
    # Valid time: the item holds from created_at until valid_to (None while it holds); prior_status is
    # the status it had while it held (set once it is superseded). The store keeps both.
    valid_to: int | None = None
    prior_status: str = ""


@dataclasses.dataclass(frozen=True)
class Watermark:
    """The last message extraction read: messages after (created_at, message_id) are new."""

    created_at: int
    message_id: str


OUTCOMES = ("inserted", "merged", "superseded", "conflicted", "dropped")


@dataclasses.dataclass
class CandidateResult:
    """The audit line of one candidate: what reconciliation did with it and why."""

    uid: str
    text: str
    outcome: str  # one of OUTCOMES
    target_uid: str = ""
    similarity: float = 0.0
    reason: str = ""
    # When a model adjudicated it: the builtin outcome, the model, its answer and reason, whether it applied.
    adjudication: dict[str, object] | None = None


@dataclasses.dataclass
class ReconcileReport:
    """The metrics of one ExtractState or UpsertStateItems run (the event payload and the response)."""

    extracted: int = 0
    results: list[CandidateResult] = dataclasses.field(default_factory=list)
    duration_us: int = 0
    skipped_reason: str = ""  # "", "no_new_messages", "no_user_message" or "model_budget_exhausted"
    messages_read: int = 0
    embedding_model: str = ""

    def count(self, outcome: str) -> int:
        return sum(1 for result in self.results if result.outcome == outcome)

    def to_json(self) -> dict[str, object]:
        """The event payload: counts, duration, skip reason and the audit lines."""
        return {
            "extracted": self.extracted, **{outcome: self.count(outcome) for outcome in OUTCOMES},
            "duration_ms": round(self.duration_us / 1000, 3), "skipped_reason": self.skipped_reason,
            "messages_read": self.messages_read, "embedding_model": self.embedding_model,
            "results": [{k: v for k, v in dataclasses.asdict(result).items() if k != "adjudication" or v is not None}
                        for result in self.results],
        }
