"""The uncertain band: which builtin reconciliation decisions a configured model may adjudicate (issue 11).

A decision is uncertain when nothing but cosine similarity near a threshold stands behind it:

- a merge by the `duplicate` rule (no lexical signal, only a score at or above `merge`) scoring below
  merge + merge_margin: two texts alike in words may still contradict in a slot the rules do not know;
- an insert by `no_match` whose nearest item of its type scores at least merge - insert_margin: a
  near miss may be the same item reworded, or a contradiction the rules did not see;
- a conflict by the `contrast` rule scoring below conflict + conflict_margin: the contrasting slot may
  belong to two different items.

Everything else is certain: a named replacement, change language with a user ref, a paraphrase, a
distinct object, an explicit `supersedes`, a same-uid merge, a drop.

The margins were chosen on the seen labelled sets only (bench/calibrate_reconciliation.py --band):
with the builtin MiniLM thresholds (merge 0.66, conflict 0.40) the band is duplicate merges below
0.90, no-match inserts from 0.45 and contrast conflicts below 0.75. On the seen sets with today's rules
it holds 17 of their 18 misjudged pairs; on the two seen sets scored blind before they were read
(fresh7 and fresh8, with the rules of that time) 31 of their 40. Margins are relative to the thresholds
so an embedding model with other thresholds gets a band of the same shape. No I/O.
"""

from __future__ import annotations

import dataclasses

from taskmem.core.reconcile_decisions import Decision, Outcome, ReconcileThresholds


@dataclasses.dataclass(frozen=True)
class UncertainBand:
    """How far past each threshold a similarity-only decision stays uncertain (see the module docstring)."""

    merge_margin: float = 0.24
    insert_margin: float = 0.21
    conflict_margin: float = 0.35


DEFAULT_BAND = UncertainBand()


def uncertainty(decision: Decision, thresholds: ReconcileThresholds, band: UncertainBand = DEFAULT_BAND) -> str:
    """Why the builtin decision is uncertain, in words ("" when it is not): a pure function of the
    decision's recorded rule and score and the thresholds it was made with."""
    score = decision.score
    if score is None:
        return ""
    if decision.outcome is Outcome.MERGE and decision.rule == "duplicate":
        limit = thresholds.merge + band.merge_margin
        return f"merge on similarity alone: score {score:.3f} < {limit:.3f}" if score < limit else ""
    if decision.outcome is Outcome.INSERT and decision.rule == "no_match" and decision.nearest_uid is not None:
        limit = thresholds.merge - band.insert_margin
        return f"insert beside a near item: score {score:.3f} >= {limit:.3f}" if score >= limit else ""
    if decision.outcome is Outcome.CONFLICT and decision.rule == "contrast":
        limit = thresholds.conflict + band.conflict_margin
        return f"conflict on a contrast at low similarity: score {score:.3f} < {limit:.3f}" if score < limit else ""
    return ""


def subject_uid(decision: Decision) -> str | None:
    """The existing item an uncertain decision is about: the one merged into or conflicted with, or for an
    insert the nearest item it was compared with."""
    return decision.existing_uid or decision.nearest_uid


__all__ = ["DEFAULT_BAND", "UncertainBand", "subject_uid", "uncertainty"]
