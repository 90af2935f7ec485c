"""Deterministic reconciliation of extracted (or agent-sent) state items with a thread's state.

The seed's structure is kept: candidates are validated, their refs checked against the batch,
each is compared only with items of its own type that are not superseded (topic-overlap boost
+0.02), and each gets one auditable decision: merge, supersede (with structured evidence),
conflict (flagged on both sides) or insert. What decides is different, because the seed's cosine
bands were tuned for another embedding model (see reconcile_signals for why cosine alone fails):

1. explicit  - the candidate names the uid it supersedes, it uses change language and a ref is a
               user message: supersede that item.
2. named     - the candidate says what it retires ("instead of Redis", "no longer X", "switched
               from X to Y", "X was replaced by Y"), an item of its type says that thing, their
               cosine is at least `named_floor`, and a ref is a user message: supersede it.
3. nearest first, among items scoring at least the lowest band (texts are compared after values,
   units, time zones, bounds and complements are written one way: reconcile_values):
   contrast  - the two align word by word and differ in a contrasting slot (negation or a
               complement, the two poles of a scale, another value of one dimension, the same
               times in another order, another time zone, two products, two days, a rival value
               of a property noun, two members of a closed set of rival values, another value of
               the frame's last adjunct, one proposition under another modality - required,
               forbidden, open - or another scope - any / only) and score at least `conflict`:
               supersede when the candidate uses change language and a ref is a user message,
               otherwise conflict on both, the slot named in the decision's detail. A contrasting
               pair is never merged.
   distinct  - the same frame about a different object or measure (another named modifier of the
               same head noun, another numbered designator, bounds on different measures, a last
               adjunct that answers another question: "per word" / "within 30 days"): never
               merged, conflicted or superseded; when nothing else matches, the insert records
               why as evidence {"distinct": {item, kind, old, new}}. A plain-word modifier
               ("login"/"checkout") is a different item only below `distinct_object_merge`.
   value     - change language, a user ref, a quantity of one unit with a new number ("capped at 100
               items" / "cap changed to 500 items") and score at least `conflict`: supersede.
   change    - change language, a user ref, score at least `unnamed_supersede`: supersede.
   paraphrase - score at least `paraphrase_floor` and, synonyms folded, one text's words all in the
               other (or both stating one design property of one subject): merge, as a duplicate.
   duplicate - score at least `merge`: merge, unless the pair is the same frame ending on another
               object of one or two words ("roll out firmware 2.3 to the thermostats" / "to the door
               sensors") scoring below `distinct_object_merge`, which is a different item, and two
               questions asking for different kinds of answer ("how many seats..." / "does it have a
               wheelchair space?") below it, likewise. A reworded verb or subject ("who owns" /
               "which team is responsible for") still merges.
4. otherwise insert (rule "distinct" when a same-frame item was set aside as another object).

A candidate whose uid is an existing item merges into it (similarity 1.0), unless that item is
superseded: a superseded item is never resurrected, the candidate is dropped.

Adjudication (issue 11): where the outcome is uncertain (core/reconcile_band), a configured model may
answer instead; its answers come back as `overrides` (candidate index -> Adjudication) and are applied
here, in the same pass and with the same bookkeeping, so the result is a pure function of the texts,
the similarities and the model's answers. An answer that cannot apply (an unknown or inactive target, a
target of another type, a supersede with no user message behind it, a drop or same-uid merge to
override) keeps the builtin decision; either way the decision's evidence says what the model answered.

No I/O: embeddings come in as a similarity function over items the caller has embedded.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from taskmem.core.reconcile_signals import (
    align,
    change_phrase,
    changed_value,
    different_questions,
    find_contrast,
    find_distinction,
    named_overlap,
    is_paraphrase,
    named_replacements,
    property_contrast,
    retired_tokens,
)
from taskmem.core.state_items import (
    SUPERSEDED,
    Candidate,
    StateItem,
    filter_refs,
    has_replacement_verb,
    has_supersession_signal,
    merge_items,
    validate_item,
)

MAX_CANDIDATES = 25
TOPIC_BOOST = 0.02


class Outcome(enum.StrEnum):
    INSERT = "insert"
    MERGE = "merge"
    SUPERSEDE = "supersede"
    CONFLICT = "conflict"
    DROP = "drop"


@dataclasses.dataclass(frozen=True)
class ReconcileThresholds:
    """Per embedding model. Scores are cosine (+ TOPIC_BOOST when topics overlap, capped at 1.0).

    merge                 - a non-contrasting pair at or above is a duplicate.
    conflict              - a contrasting pair at or above is about the same subject.
    alignment             - least word-alignment ratio (0-1) for two texts to share a frame, so
                            that a differing slot is a contrast.
    named_floor           - least cosine for a change that names what it retires to supersede.
    unnamed_supersede     - change language with nothing named and no contrast supersedes at or above.
    distinct_object_merge - a pair differing only in its final object merges only at or above.
    property_floor        - least cosine for a statement that breaks a property the other states
                            (reconcile_lexicon.PROPERTY_VIOLATIONS) to conflict with it; the
                            lexicon, not cosine, relates the two, so it is low.
    paraphrase_floor      - least cosine for a pair the paraphrase signal says agrees in other words
                            (reconcile_signals.is_paraphrase) to merge below `merge`.
    """

    merge: float
    conflict: float
    alignment: float = 0.5
    named_floor: float = 0.3
    unnamed_supersede: float = 0.7
    distinct_object_merge: float = 0.9
    property_floor: float = 0.1
    paraphrase_floor: float = 0.4
    topic_boost: float = TOPIC_BOOST
    max_candidates: int = MAX_CANDIDATES

    def __post_init__(self) -> None:
        for field in ("merge", "conflict", "alignment", "named_floor", "unnamed_supersede", "distinct_object_merge",
                      "property_floor", "paraphrase_floor"):
            value = getattr(self, field)
            if not -1.0 <= value <= 1.0:
                raise ValueError(f"{field}: {value} is outside [-1, 1]")
        if not 0 < self.max_candidates <= 1000:
            raise ValueError(f"max_candidates: {self.max_candidates} is outside 1..1000")


# The seed's numbers (tuned for another model): the fallback for an embedding model nobody calibrated.
SEED_THRESHOLDS = ReconcileThresholds(merge=0.92, conflict=0.85, unnamed_supersede=0.85,
                                      distinct_object_merge=0.92)


@dataclasses.dataclass(frozen=True)
class BatchMessage:
    """A message of the extraction batch, as refs may name it."""

    created_at: int
    from_user: bool


@dataclasses.dataclass(frozen=True)
class Decision:
    """What happened to one candidate, for audit and the extraction event.

    existing_uid is the item merged into, superseded or conflicted with (None for insert/drop);
    similarity is their raw cosine and score the boosted one (None when not compared); rule names
    the branch taken (see the module docstring; drops: invalid, no_valid_refs, over_cap,
    resurrects_superseded); evidence is what the branch saw (for supersede, the evidence stored
    on the old item)."""

    outcome: Outcome
    candidate_uid: str | None
    existing_uid: str | None = None
    similarity: float | None = None
    score: float | None = None
    rule: str = ""
    evidence: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    detail: str = ""
    # For an insert: the nearest item of its type it was compared with (the one an adjudicator is shown).
    nearest_uid: str | None = None


ADJUDICATED_RULE = "adjudicated"
ADJUDICABLE = (Outcome.MERGE, Outcome.SUPERSEDE, Outcome.CONFLICT, Outcome.INSERT)


@dataclasses.dataclass(frozen=True)
class Adjudication:
    """A model's answer for one candidate of the uncertain band: the outcome, the existing item it is
    about (None for insert), the model's name, its short reason, and why the candidate was asked
    (core/reconcile_band's words). `outcome` is the model's word as given; only ADJUDICABLE values apply."""

    outcome: str
    target_uid: str | None
    model: str
    reason: str = ""
    uncertain: str = ""
    error: str = ""  # why there is no answer (the model failed, timed out, or skipped the question)


@dataclasses.dataclass(frozen=True)
class Prepared:
    """prepare_candidates' answer: the valid items to embed (refs filtered, times set), and a DROP
    decision for each candidate left out. `extracted` counts every candidate given."""

    items: list[StateItem]
    drops: list[Decision]
    extracted: int
    batch: Mapping[str, BatchMessage]
    coercions: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class ReconcileMetrics:
    extracted: int = 0
    inserted: int = 0
    merged: int = 0
    superseded: int = 0
    conflicted: int = 0
    dropped: int = 0

    def as_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class ReconcileResult:
    """decisions: one per candidate given to prepare_candidates, drops first then in order.
    writes: the final state of every item to persist (new candidates, and existing items merged
    into, superseded or flagged), each once, in the order first touched. inserted: the uids
    among writes that are new rows (their embeddings must be stored)."""

    decisions: list[Decision]
    writes: list[StateItem]
    inserted: list[str]
    metrics: ReconcileMetrics


Similarity = Callable[[StateItem, StateItem], float]


def prepare_candidates(
    candidates: Sequence[Candidate],
    batch: Mapping[str, BatchMessage],
    max_candidates: int = MAX_CANDIDATES,
) -> Prepared:
    """Validate candidates before anything is embedded.

    Only the first `max_candidates` are considered (the rest: DROP over_cap). Each goes through
    validate_item (DROP invalid on errors; coercions are kept and reported). Its refs are
    filtered to message ids of `batch` (the messages shown to the extractor, or for agent-sent
    items the thread's messages the caller allows); none left: DROP no_valid_refs. created_at and
    last_seen_at become the newest ref's created_at."""
    items: list[StateItem] = []
    drops: list[Decision] = []
    coercions: list[str] = []
    for index, candidate in enumerate(candidates):
        if index >= max_candidates:
            drops.append(Decision(Outcome.DROP, None, rule="over_cap",
                                  detail=f"candidate {index} is past the cap of {max_candidates}"))
            continue
        validation = validate_item(candidate)
        if validation.item is None:
            drops.append(Decision(Outcome.DROP, None, rule="invalid", detail="; ".join(validation.errors)))
            continue
        item = validation.item
        coercions.extend(f"{item.uid}: {note}" for note in validation.coercions)
        item.refs = filter_refs(item.refs, batch)
        if not item.refs:
            drops.append(Decision(Outcome.DROP, item.uid, rule="no_valid_refs",
                                  detail="no ref is a message id of this batch"))
            continue
        item.created_at = item.last_seen_at = max(batch[ref].created_at for ref in item.refs)
        items.append(item)
    return Prepared(items, drops, len(candidates), batch, coercions)


def reconcile_candidates(
    prepared: Prepared,
    existing: Sequence[StateItem],
    similarity: Similarity,
    thresholds: ReconcileThresholds,
    overrides: Mapping[int, Adjudication] | None = None,
) -> ReconcileResult:
    """Decide each prepared item against the thread's items and the batch's earlier candidates.

    `existing`: the thread's state items (any status; superseded ones are never compared or
    resurrected). Pass every active item, or at least the nearest ones of each candidate's type.
    `similarity(candidate, other)`: the cosine of their embeddings, where other is an existing
    item or an earlier candidate of this batch (so the caller embeds every prepared item first).
    `overrides`: a model's answers by index into prepared.items (see the module docstring); each
    applies where it can, else the builtin decision stands with the answer in its evidence.
    Pure: nothing passed in is mutated; the result says what to write."""
    working: dict[str, StateItem] = {item.uid: dataclasses.replace(item) for item in existing}
    touched: dict[str, None] = {}
    inserted: list[str] = []
    decisions: list[Decision] = list(prepared.drops)
    for index, original in enumerate(prepared.items):
        candidate = dataclasses.replace(original)
        decision = _decide(candidate, working, similarity, thresholds, prepared.batch)
        if overrides and index in overrides:
            decision = _adjudicated(decision, overrides[index], candidate, working, similarity, thresholds,
                                    prepared.batch)
        decisions.append(decision)
        _apply(decision, candidate, working, touched, inserted)
    counts = {outcome: sum(1 for d in decisions if d.outcome is outcome) for outcome in Outcome}
    metrics = ReconcileMetrics(
        extracted=prepared.extracted, inserted=counts[Outcome.INSERT], merged=counts[Outcome.MERGE],
        superseded=counts[Outcome.SUPERSEDE], conflicted=counts[Outcome.CONFLICT], dropped=counts[Outcome.DROP],
    )
    return ReconcileResult(decisions, [working[uid] for uid in touched], inserted, metrics)


def _decide(
    candidate: StateItem,
    working: Mapping[str, StateItem],
    similarity: Similarity,
    thresholds: ReconcileThresholds,
    batch: Mapping[str, BatchMessage],
) -> Decision:
    same = working.get(candidate.uid)
    if same is not None:
        if not same.active:
            return Decision(Outcome.DROP, candidate.uid, same.uid, 1.0, 1.0, "resurrects_superseded",
                            detail="same text as a superseded item: never resurrected")
        return Decision(Outcome.MERGE, candidate.uid, same.uid, 1.0, 1.0, "same_uid")

    pool = [item for item in working.values() if item.type_tag == candidate.type_tag and item.active]
    scored = sorted(((_score(candidate, item, similarity, thresholds), item) for item in pool),
                    key=lambda pair: (-pair[0][1], pair[1].uid))
    user_ref = _user_ref(candidate, batch)
    change = change_phrase(candidate.text)

    def supersede(item: StateItem, cosine: float, score: float, rule: str, **extra: Any) -> Decision:
        evidence = {"trigger": change, "ref_msg_id": user_ref, "candidate_uid": candidate.uid, "rule": rule,
                    "similarity": round(cosine, 4), **extra}
        return Decision(Outcome.SUPERSEDE, candidate.uid, item.uid, cosine, score, rule, evidence)

    if candidate.supersedes and change and user_ref:
        for (cosine, score), item in scored:
            if item.uid == candidate.supersedes:
                return supersede(item, cosine, score, "explicit_supersedes")

    named = named_replacements(candidate.text)
    if named and user_ref:
        best: tuple[int, float, float, StateItem, tuple[str, ...]] | None = None
        for (cosine, score), item in scored:
            hits = named_overlap(named, item.text)
            if hits and cosine >= thresholds.named_floor and (best is None or (len(hits), score) > best[:2]):
                best = (len(hits), score, cosine, item, hits)
        if best is not None:
            return supersede(best[3], best[2], best[1], "named_replacement", named=list(best[4]))

    lowest = min(thresholds.merge, thresholds.conflict, thresholds.unnamed_supersede, thresholds.paraphrase_floor)
    retiring = retired_tokens(candidate.text)
    distinct: dict[str, Any] = {}  # why the nearest same-frame item is a different one (insert evidence)
    floor = min(lowest, thresholds.property_floor)
    for (cosine, score), item in scored:
        if score < floor:
            break
        # An item that already retires what the candidate retires is a restatement, not its target.
        change = None if retiring & retired_tokens(item.text) else change_phrase(candidate.text)
        if score < lowest:
            # Far in meaning, but one may break a property the other states (words cosine cannot relate).
            contrast = property_contrast(item.text, candidate.text)
            if contrast is None:
                continue
        else:
            contrast = find_contrast(item.text, candidate.text, thresholds.alignment)
        if contrast is not None and (score >= thresholds.conflict or contrast.kind == "property"):
            if change and user_ref:
                return supersede(item, cosine, score, "change_with_contrast", contrast=contrast.as_evidence())
            return Decision(Outcome.CONFLICT, candidate.uid, item.uid, cosine, score, "contrast",
                            {"contrast": contrast.as_evidence()}, _slot_words(contrast.as_evidence()))
        if contrast is not None:
            continue
        distinction = find_distinction(item.text, candidate.text, thresholds.alignment)
        if distinction is not None and not (distinction.kind == "object" and score >= thresholds.distinct_object_merge):
            distinct = distinct or {"item": item.uid, **distinction.as_evidence()}
            continue
        value = changed_value(item.text, candidate.text) if change and user_ref else None
        if value is not None and score >= thresholds.conflict:
            return supersede(item, cosine, score, "change_of_value", contrast=value.as_evidence())
        if change and user_ref and score >= thresholds.unnamed_supersede:
            return supersede(item, cosine, score, "change_unnamed")
        paraphrase = is_paraphrase(item.text, candidate.text) if thresholds.paraphrase_floor <= score else None
        if paraphrase:  # the words agree once synonyms are folded: a final object is no other object
            return Decision(Outcome.MERGE, candidate.uid, item.uid, cosine, score, "paraphrase",
                            {"paraphrase": paraphrase})
        if score >= thresholds.merge:
            if score < thresholds.distinct_object_merge and align(item.text, candidate.text).final_substitution:
                continue
            asked = different_questions(item.text, candidate.text)
            if asked is not None and score < thresholds.distinct_object_merge:
                distinct = distinct or {"item": item.uid, "kind": "question", "old": asked[0], "new": asked[1]}
                continue
            return Decision(Outcome.MERGE, candidate.uid, item.uid, cosine, score, "duplicate")
    nearest = scored[0] if scored else None
    return Decision(Outcome.INSERT, candidate.uid, None,
                    nearest[0][0] if nearest else None, nearest[0][1] if nearest else None,
                    "distinct" if distinct else "no_match", {"distinct": distinct} if distinct else {},
                    _slot_words(distinct) if distinct else "", nearest[1].uid if nearest else None)


def _user_ref(candidate: StateItem, batch: Mapping[str, BatchMessage]) -> str | None:
    """The candidate's first ref to a user message of the batch (what a supersession needs)."""
    return next((ref for ref in candidate.refs if batch.get(ref, BatchMessage(0, False)).from_user), None)


def _adjudicated(
    builtin: Decision,
    answer: Adjudication,
    candidate: StateItem,
    working: Mapping[str, StateItem],
    similarity: Similarity,
    thresholds: ReconcileThresholds,
    batch: Mapping[str, BatchMessage],
) -> Decision:
    """The decision with a model's answer applied, or the builtin one when the answer cannot apply;
    both carry evidence["adjudication"]: the builtin outcome, the model, its answer and whether it applied."""
    record: dict[str, Any] = {
        "model": answer.model, "answer": answer.outcome, "target": answer.target_uid, "reason": answer.reason,
        "uncertain": answer.uncertain,
        "builtin": {"outcome": builtin.outcome.value, "existing_uid": builtin.existing_uid, "rule": builtin.rule,
                    "score": None if builtin.score is None else round(builtin.score, 4)},
    }

    def keep(why: str) -> Decision:
        return dataclasses.replace(builtin, evidence={**builtin.evidence,
                                                      "adjudication": {**record, "applied": False, "kept": why}})

    if answer.error:
        return keep(f"no answer: {answer.error}")
    if builtin.outcome not in ADJUDICABLE or builtin.rule == "same_uid":
        return keep(f"a {builtin.rule} decision is not adjudicated")
    outcome = next((o for o in ADJUDICABLE if o.value == answer.outcome), None)
    if outcome is None:
        return keep(f"unknown outcome {answer.outcome!r}")
    target = working.get(answer.target_uid or "") if outcome is not Outcome.INSERT else None
    if outcome is not Outcome.INSERT and (target is None or not target.active or target.uid == candidate.uid
                                          or target.type_tag != candidate.type_tag):
        return keep(f"target {answer.target_uid!r} is not an active {candidate.type_tag} of this thread")
    user_ref = _user_ref(candidate, batch)
    if outcome is Outcome.SUPERSEDE and user_ref is None:
        return keep("a supersede needs a ref to a user message")
    if outcome is builtin.outcome and (target.uid if target else None) == builtin.existing_uid:
        return dataclasses.replace(builtin, evidence={**builtin.evidence,
                                                      "adjudication": {**record, "applied": True, "agreed": True}})
    record = {**record, "applied": True, "agreed": False}
    detail = f"{answer.model} answered {outcome.value} (builtin {builtin.outcome.value}, {builtin.rule})" + (
        f": {answer.reason}" if answer.reason else "")
    if target is None:
        return Decision(Outcome.INSERT, candidate.uid, None, builtin.similarity, builtin.score, ADJUDICATED_RULE,
                        {"adjudication": record}, detail, builtin.nearest_uid or builtin.existing_uid)
    cosine, score = _score(candidate, target, similarity, thresholds)
    evidence: dict[str, Any] = {"adjudication": record}
    if outcome is Outcome.SUPERSEDE:  # the evidence stored on the old item, as the rules' supersessions store it
        evidence = {"trigger": change_phrase(candidate.text), "ref_msg_id": user_ref, "candidate_uid": candidate.uid,
                    "rule": ADJUDICATED_RULE, "similarity": round(cosine, 4),
                    "matched_by": f"adjudicated by {answer.model}", **evidence}
    return Decision(outcome, candidate.uid, target.uid, cosine, score, ADJUDICATED_RULE, evidence, detail)


def _slot_words(evidence: Mapping[str, Any]) -> str:
    """The slot a contrast or distinction saw, in words for the report: "choice: in vials / in syringes"."""
    return f"{evidence['kind']}: {evidence['old']} / {evidence['new']}"


def _score(candidate: StateItem, item: StateItem, similarity: Similarity,
           thresholds: ReconcileThresholds) -> tuple[float, float]:
    cosine = float(similarity(candidate, item))
    boost = thresholds.topic_boost if set(candidate.topic_tags) & set(item.topic_tags) else 0.0
    return cosine, min(1.0, cosine + boost)


def _apply(decision: Decision, candidate: StateItem, working: dict[str, StateItem],
           touched: dict[str, None], inserted: list[str]) -> None:
    outcome, old_uid = decision.outcome, decision.existing_uid
    if outcome is Outcome.DROP:
        return
    if outcome is Outcome.MERGE:
        assert old_uid is not None
        working[old_uid] = merge_items(working[old_uid], candidate)
        touched[old_uid] = None
        return
    if outcome is Outcome.SUPERSEDE:
        assert old_uid is not None
        working[old_uid] = dataclasses.replace(working[old_uid], status=SUPERSEDED, replaced_by=candidate.uid,
                                               supersession_evidence=dict(decision.evidence))
        touched[old_uid] = None
        candidate.conflict = False  # supersession resolved the tension
        candidate.supersedes = old_uid
    elif outcome is Outcome.CONFLICT:
        assert old_uid is not None
        working[old_uid] = dataclasses.replace(working[old_uid], conflict=True)
        touched[old_uid] = None
        candidate.conflict = True
        candidate.supersedes = None
    else:
        candidate.supersedes = None
    working[candidate.uid] = candidate
    touched[candidate.uid] = None
    inserted.append(candidate.uid)


def decide_as_seed(candidate_text: str, has_user_ref: bool, score: float,
                   thresholds: ReconcileThresholds = SEED_THRESHOLDS) -> Outcome:
    """The seed's decision tree exactly as written, for one candidate and its nearest item:
    score >= merge: merge; conflict <= score < merge: supersede if the text has a supersession
    trigger, a replacement verb and a user ref, else conflict; below: insert. Kept as the
    baseline the calibration compares against; the service uses reconcile_candidates."""
    if score >= thresholds.merge:
        return Outcome.MERGE
    if score >= thresholds.conflict:
        if has_supersession_signal(candidate_text) and has_user_ref and has_replacement_verb(candidate_text):
            return Outcome.SUPERSEDE
        return Outcome.CONFLICT
    return Outcome.INSERT


__all__ = [
    "ADJUDICABLE", "ADJUDICATED_RULE", "MAX_CANDIDATES", "SEED_THRESHOLDS", "TOPIC_BOOST", "Adjudication",
    "BatchMessage", "Decision", "Outcome", "Prepared",
    "ReconcileMetrics", "ReconcileResult", "ReconcileThresholds", "Similarity", "decide_as_seed",
    "prepare_candidates", "reconcile_candidates",
]
