"""Reconciliation's I/O around core/reconcile's pipeline: read the thread's items and their vectors, embed
what is new, decide, let a configured model answer the open questions the policy raised and decide again with
its answers, and hand back one function that persists it all in a transaction.

The caller holds the thread's lock from plan_reconciliation until the persist function has committed, so two
runs on one thread never decide against the same stale state. Every write path takes this one route:
UpsertStateItems and ExtractState with their candidates' refs, AddDecision and AddError as the caller's own
statement (stated_candidate: the caller's word stands behind it as a user message's does).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Sequence

import numpy as np

from taskmem.core.messages import Message, Role
from taskmem.core.reconcile import (
    ADJUDICATED_RULE, STATED_REF, BatchMessage, Decision, Outcome, Prepared, ReconcileThresholds, prepare_candidates,
    reconcile_candidates,
)
from taskmem.core.state_items import Candidate, StateItem, normalize_text
from taskmem.core.state_records import CandidateResult, ReconcileReport, StoredStateItem
from taskmem.providers.embeddings import Embedder
from taskmem.state.adjudication import Adjudicator
from taskmem.store.state import state_items as item_store
from taskmem.store.access import Transaction

LEXICAL_MODEL = "lexical"  # the similarity used when no embedder is configured
# An open question is stored and reported as the pair in conflict (RECONCILE_OUTCOME_CONFLICTED, conflict_with).
_OUTCOME_WORDS = {Outcome.INSERT: "inserted", Outcome.MERGE: "merged", Outcome.SUPERSEDE: "superseded",
                  Outcome.ASK: "conflicted", Outcome.DROP: "dropped"}
_SPEAKERS = {Role.USER: "user", Role.AGENT: "agent", Role.TOOL: "tool", Role.SYSTEM: "document"}


@dataclasses.dataclass
class ReconcilePlan:
    """What one run decided, ready to persist."""

    thread_id: str
    report: ReconcileReport
    writes: list[StoredStateItem]
    vectors: dict[str, np.ndarray]  # uid → vector to store (new items, and old ones embedded now)
    model: str

    def persist(self, tx: Transaction) -> list[StoredStateItem]:
        for item in self.writes:
            item.updated_at = tx.now
            item_store.save_item(tx, item)
        for uid, vector in self.vectors.items():
            item_store.save_embedding(tx, self.thread_id, uid, self.model, vector)
        # A superseded item settles the conflicts it was in: its rivals are plain items again.
        released = {rival.uid: rival for item in self.writes if not item.active
                    for rival in item_store.release_rivals(tx, self.thread_id, item.uid)}
        self.writes = [released.pop(item.uid, item) for item in self.writes] + list(released.values())
        return self.writes


def batch_of(messages: Sequence[Message]) -> dict[str, BatchMessage]:
    """The messages candidates may cite, with who said them (a system message is a document put in the thread)
    and their words: the policy reads the user's, the judge is shown whoever's stands behind a candidate."""
    return {m.id: BatchMessage(m.created_at, m.role is Role.USER, m.content, _SPEAKERS.get(m.role, "agent"))
            for m in messages}


def prepare_agent_candidates(candidates: Sequence[Candidate], batch: dict[str, BatchMessage],
                             max_candidates: int) -> Prepared:
    """An agent's items may come without refs (the agent is the evidence); items with refs go through the
    same ref check as extracted ones."""
    return prepare_candidates(candidates, batch, max_candidates, refs_required=False)


def stated_candidate(candidate: Candidate, now: int, grounded: bool = True) -> Prepared:
    """One candidate the caller states in its own words at `now` (AddDecision, AddError). A `grounded` one is
    reconciled as if it cited a user message, so the caller's newest word on a slot retires the old value.
    The stand-in ref never reaches the store: plan_reconciliation takes it off and records the evidence as
    stated by the caller."""
    stated = dataclasses.replace(candidate, refs=(STATED_REF,))
    return prepare_candidates([stated], {STATED_REF: BatchMessage(now, grounded, candidate.text, "agent")}, 1)


async def plan_reconciliation(
    existing: list[StoredStateItem], stored_vectors: dict[str, np.ndarray], prepared: Prepared,
    embedder: Embedder | None, thresholds: ReconcileThresholds, thread_id: str, now: int,
    adjudicator: Adjudicator | None = None,
) -> ReconcilePlan:
    model = embedder.model_name if embedder is not None else LEXICAL_MODEL
    vectors: dict[str, np.ndarray] = {}
    if embedder is not None:
        # Embed the candidates, and any current item without a vector of this model, in one batch.
        need = [i for i in existing if i.active and i.uid not in stored_vectors] + list(prepared.items)
        if need:
            matrix = await embedder.embed([item.text for item in need])
            vectors = {item.uid: matrix[n] for n, item in enumerate(need)}
    known = {**stored_vectors, **vectors}
    similarity = _cosine(known) if embedder is not None else _lexical
    result = reconcile_candidates(prepared, existing, similarity, thresholds, now)
    if adjudicator is not None:
        candidates = {item.uid: item for item in [*existing, *prepared.items]}
        overrides = await adjudicator.overrides(prepared, result.decisions[len(prepared.drops):], candidates)
        if overrides:
            result = reconcile_candidates(prepared, existing, similarity, thresholds, now, overrides)
    texts = {item.uid: item.text for item in prepared.items}
    writes = [_without_stated_ref(_stored(item, thread_id, now)) for item in result.writes]
    _link_conflicts(result.decisions, {item.uid: item for item in writes})
    report = ReconcileReport(extracted=prepared.extracted, results=[
        _result(d, texts) for d in result.decisions], embedding_model=model)
    # New rows need their vector; existing items embedded just now keep theirs for next time.
    keep = set(result.inserted) | {item.uid for item in existing}
    to_store = {uid: vector for uid, vector in vectors.items() if uid in keep}
    return ReconcilePlan(thread_id, report, writes, to_store, model)


def _without_stated_ref(item: StoredStateItem) -> StoredStateItem:
    """A stated item keeps no stand-in ref; its evidence says the caller stated it."""
    if STATED_REF in item.refs:
        item.refs = [ref for ref in item.refs if ref != STATED_REF]
    evidence = item.supersession_evidence
    if evidence and evidence.get("ref_msg_id") == STATED_REF:
        said = evidence.get("matched_by") or ""
        matched_by = said if "stated by the caller" in said else "; ".join(filter(None, (said, "stated by the caller")))
        item.supersession_evidence = {**evidence, "ref_msg_id": None, "matched_by": matched_by}
    return item


def _cosine(vectors: dict[str, np.ndarray]) -> Callable[[StateItem, StateItem], float]:
    def similarity(a: StateItem, b: StateItem) -> float:
        va, vb = vectors.get(a.uid), vectors.get(b.uid)
        return float(np.dot(va, vb)) if va is not None and vb is not None else 0.0
    return similarity


def _lexical(a: StateItem, b: StateItem) -> float:
    """With no embedder: how alike the normalised texts are (0..1), so reconciliation still runs."""
    return difflib.SequenceMatcher(None, normalize_text(a.text), normalize_text(b.text)).ratio()


def _stored(item: StateItem, thread_id: str, now: int) -> StoredStateItem:
    if isinstance(item, StoredStateItem):
        return dataclasses.replace(item, conflict_with=list(item.conflict_with))
    return item_store.stored(item, thread_id, now)


def _link_conflicts(decisions: list[Decision], by_uid: dict[str, StoredStateItem]) -> None:
    for d in decisions:
        if d.outcome is Outcome.ASK and d.candidate_uid and d.existing_uid:
            for one, other in ((d.candidate_uid, d.existing_uid), (d.existing_uid, d.candidate_uid)):
                item = by_uid.get(one)
                if item is not None and other not in item.conflict_with:
                    item.conflict_with.append(other)


def _result(d: Decision, texts: dict[str, str]) -> CandidateResult:
    reason = d.rule + (f": {d.detail}" if d.detail else "")
    if d.score is not None and d.outcome is not Outcome.DROP:
        reason += f" (score {d.score:.3f})"
    adjudication = d.evidence.get("adjudication")
    if adjudication is not None and d.rule != ADJUDICATED_RULE:  # asked, and the question stays open
        reason += f"; {adjudication['model']} did not settle it: {adjudication.get('error') or adjudication['answer']!r}"
    return CandidateResult(uid=d.candidate_uid or "", text=texts.get(d.candidate_uid or "", ""),
                           outcome=_OUTCOME_WORDS[d.outcome], target_uid=d.existing_uid or "",
                           similarity=round(d.score or 0.0, 4), reason=reason,
                           adjudication=dict(adjudication) if adjudication is not None else None)
