"""One old item and one candidate through reconcile_candidates, at a cosine the test chooses."""

from __future__ import annotations

from taskmem.core.reconcile import (
    BatchMessage,
    Decision,
    ReconcileThresholds,
    prepare_candidates,
    reconcile_candidates,
)
from taskmem.core.state_items import Candidate, StateItem, validate_item


def thresholds() -> ReconcileThresholds:
    return ReconcileThresholds(merge=0.66, conflict=0.4, alignment=0.5, named_floor=0.3)


def decide_pair(old_text: str, new_text: str, cosine: float, t: ReconcileThresholds, kind: str = "decision",
                from_user: bool = False) -> Decision:
    """The decision on `new_text` against a thread holding `old_text`; the candidate cites a message
    (the agent's unless `from_user`: so a contrast is a conflict, not the user's change)."""
    old = validate_item(Candidate(kind, old_text, refs=("m0",))).item
    assert old is not None
    prepared = prepare_candidates([Candidate(kind, new_text, refs=("m1",))], {"m1": BatchMessage(2, from_user)})

    def similarity(a: StateItem, b: StateItem) -> float:
        return cosine
    return reconcile_candidates(prepared, [old], similarity, t).decisions[-1]
