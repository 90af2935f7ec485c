"""Reconciliation with I/O around the pure decision: read the thread's items and their vectors, embed
what is new, let core/reconcile_decisions decide, and hand back one function that persists it all in a transaction.

The caller holds the thread's lock from plan_reconciliation until the persist function has committed,
so two runs on one thread never decide against the same stale state.

Two things are decided here rather than in core/reconcile_decisions, because they are about who speaks, not about
how alike two texts are:

- an explicit replacement: a caller's candidate (source "agent") whose `supersedes` names an active item
  of its type always supersedes it, whatever the similarity, with the evidence recorded as stated by the
  caller. core/reconcile_decisions's guard (change language and a ref to a user message) still protects
  model-extracted candidates.
- a stated item (AddDecision): the caller's own statement is the evidence a user message is for an
  extracted item, so change language or naming what it replaces supersedes (see stated_candidate).

With an adjudicator (a configured model, reconcile_adjudication "uncertain"), the builtin decisions in
core/reconcile_band's uncertain band are put to the model in one call, and core/reconcile_decisions runs
again with its answers as overrides (state/adjudication). Explicit replacements are never asked about.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Sequence

import numpy as np

from taskmem.core.messages import Message, Role
from taskmem.core.reconcile_decisions import (
    ADJUDICATED_RULE, BatchMessage, Decision, Outcome, Prepared, ReconcileThresholds, prepare_candidates,
    reconcile_candidates,
)
from taskmem.core.reconcile_signals import change_phrase
from taskmem.core.state_items import SUPERSEDED, Candidate, StateItem, merge_items, normalize_text, validate_item
from taskmem.core.state_records import CandidateResult, ReconcileReport, StoredStateItem
from taskmem.providers.embeddings import Embedder
from taskmem.state.adjudication import Adjudicator
from taskmem.store import state_items as item_store
from taskmem.store.storage import Transaction

LEXICAL_MODEL = "lexical"  # the similarity used when no embedder is configured
# The ref a stated candidate carries while it is reconciled: it stands for the caller's statement, as a
# user message's id does for an extracted item, and is taken off before anything is stored.
STATED_REF = "caller-statement"
EXPLICIT_RULE = "explicit_supersedes"
_OUTCOME_WORDS = {Outcome.INSERT: "inserted", Outcome.MERGE: "merged", Outcome.SUPERSEDE: "superseded",
                  Outcome.CONFLICT: "conflicted", Outcome.DROP: "dropped"}


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
        return self.writes


def batch_of(messages: Sequence[Message]) -> dict[str, BatchMessage]:
    return {m.id: BatchMessage(m.created_at, m.role is Role.USER) for m in messages}


def prepare_agent_candidates(candidates: Sequence[Candidate], batch: dict[str, BatchMessage], now: int,
                             max_candidates: int) -> Prepared:
    """Agent items may come without refs (the agent is the evidence); items with refs go through the
    same ref check as extracted ones."""
    with_refs = [c for c in candidates if c.refs]
    prepared = prepare_candidates(with_refs, batch, max_candidates)
    items, drops = list(prepared.items), list(prepared.drops)
    room = max_candidates - len(with_refs)
    for index, candidate in enumerate(c for c in candidates if not c.refs):
        validation = validate_item(candidate)
        if index >= room:
            drops.append(Decision(Outcome.DROP, None, rule="over_cap", detail=f"past the cap of {max_candidates}"))
        elif validation.item is None:
            drops.append(Decision(Outcome.DROP, None, rule="invalid", detail="; ".join(validation.errors)))
        else:
            validation.item.created_at = validation.item.last_seen_at = now
            items.append(validation.item)
    return Prepared(items, drops, len(candidates), batch, list(prepared.coercions))


def stated_candidate(candidate: Candidate, now: int) -> Prepared:
    """One candidate the caller states in its own words (AddDecision): reconciled as if it referred to a
    user message, so "B instead of A" or "no longer A" supersedes A. The stand-in ref never reaches the
    store: plan_reconciliation takes it off and records the evidence as stated by the caller."""
    stated = dataclasses.replace(candidate, refs=(STATED_REF,))
    return prepare_candidates([stated], {STATED_REF: BatchMessage(now, True)}, 1)


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
    explicit, rest, explicit_writes, current = _explicit_supersessions(prepared, existing, similarity)
    result = reconcile_candidates(dataclasses.replace(prepared, items=rest), current, similarity, thresholds)
    if adjudicator is not None:
        known = {item.uid: item for item in [*current, *rest]}
        overrides = await adjudicator.overrides(rest, result.decisions[len(prepared.drops):], known, thresholds)
        if overrides:
            result = reconcile_candidates(dataclasses.replace(prepared, items=rest), current, similarity, thresholds,
                                          overrides)
    texts = {item.uid: item.text for item in prepared.items}
    decisions = _in_candidate_order(prepared, explicit, result.decisions)
    touched = {item.uid: item for item in explicit_writes}
    touched.update({item.uid: item for item in result.writes})
    writes = [_without_stated_ref(_stored(item, thread_id, now)) for item in touched.values()]
    _link_conflicts(decisions, {item.uid: item for item in writes})
    report = ReconcileReport(extracted=prepared.extracted, results=[
        _result(d, texts) for d in decisions], embedding_model=model)
    # New rows need their vector; existing items embedded just now keep theirs for next time.
    inserted = set(result.inserted) | {d.candidate_uid for d in explicit.values() if d.candidate_uid}
    keep = inserted | {item.uid for item in existing}
    to_store = {uid: vector for uid, vector in vectors.items() if uid in keep}
    return ReconcilePlan(thread_id, report, writes, to_store, model)


def _explicit_supersessions(
    prepared: Prepared, existing: list[StoredStateItem], similarity: Callable[[StateItem, StateItem], float],
) -> tuple[dict[int, Decision], list[StateItem], list[StateItem], list[StateItem]]:
    """Apply each caller candidate whose `supersedes` names an active item of its type, in order.

    Returns the decisions by candidate index, the candidates left for core/reconcile_decisions, the items written
    (old ones superseded, new ones inserted or merged into) and the thread's items as they now stand."""
    working: dict[str, StateItem] = {item.uid: item for item in existing}
    decisions: dict[int, Decision] = {}
    rest: list[StateItem] = []
    writes: dict[str, StateItem] = {}
    for index, original in enumerate(prepared.items):
        target = working.get(original.supersedes or "")
        if (original.source != "agent" or target is None or not target.active
                or target.type_tag != original.type_tag or target.uid == original.uid):
            rest.append(original)
            continue
        same = working.get(original.uid)
        if same is not None and not same.active:
            rest.append(original)  # core/reconcile_decisions drops it: a superseded item is never resurrected
            continue
        candidate = dataclasses.replace(original, supersedes=target.uid, conflict=False)
        cosine = float(similarity(candidate, target))
        user_ref = next((ref for ref in candidate.refs if prepared.batch.get(ref, BatchMessage(0, False)).from_user
                         and ref != STATED_REF), None)
        evidence = {"trigger": change_phrase(candidate.text), "ref_msg_id": user_ref, "candidate_uid": candidate.uid,
                    "rule": EXPLICIT_RULE, "matched_by": "stated by the caller", "similarity": round(cosine, 4)}
        working[target.uid] = writes[target.uid] = dataclasses.replace(
            target, status=SUPERSEDED, replaced_by=candidate.uid, supersession_evidence=evidence)
        written = merge_items(same, candidate) if same is not None else candidate
        working[written.uid] = writes[written.uid] = written
        decisions[index] = Decision(Outcome.SUPERSEDE, candidate.uid, target.uid, cosine, cosine, EXPLICIT_RULE,
                                    evidence)
    return decisions, rest, list(writes.values()), list(working.values())


def _in_candidate_order(prepared: Prepared, explicit: dict[int, Decision], decided: list[Decision]) -> list[Decision]:
    """Drops first, then one decision per prepared item in order (as core/reconcile_decisions reports them)."""
    drops, others = decided[:len(prepared.drops)], iter(decided[len(prepared.drops):])
    return drops + [explicit[n] if n in explicit else next(others) for n in range(len(prepared.items))]


def _without_stated_ref(item: StoredStateItem) -> StoredStateItem:
    """A stated item keeps no stand-in ref; its evidence says the caller stated it."""
    if STATED_REF in item.refs:
        item.refs = [ref for ref in item.refs if ref != STATED_REF]
    evidence = item.supersession_evidence
    if evidence and evidence.get("ref_msg_id") == STATED_REF:
        matched_by = "; ".join(filter(None, (evidence.get("matched_by"), "stated by the caller")))
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
        if d.outcome is Outcome.CONFLICT and d.candidate_uid and d.existing_uid:
            for one, other in ((d.candidate_uid, d.existing_uid), (d.existing_uid, d.candidate_uid)):
                item = by_uid.get(one)
                if item is not None and other not in item.conflict_with:
                    item.conflict_with.append(other)


def _result(d: Decision, texts: dict[str, str]) -> CandidateResult:
    reason = d.rule + (f": {d.detail}" if d.detail else "")
    if d.score is not None and d.outcome is not Outcome.DROP:
        reason += f" (score {d.score:.3f})"
    adjudication = d.evidence.get("adjudication")
    if adjudication is not None and d.rule != ADJUDICATED_RULE:  # asked, but the builtin decision stands
        reason += (f"; {adjudication['model']} agreed" if adjudication.get("agreed")
                   else f"; {adjudication['model']}'s answer not applied: {adjudication.get('kept', '')}")
    return CandidateResult(uid=d.candidate_uid or "", text=texts.get(d.candidate_uid or "", ""),
                           outcome=_OUTCOME_WORDS[d.outcome], target_uid=d.existing_uid or "",
                           similarity=round(d.score or 0.0, 4), reason=reason,
                           adjudication=dict(adjudication) if adjudication is not None else None)
