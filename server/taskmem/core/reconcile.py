"""Reconciliation: where a new state item goes in a thread's state. One pipeline, read top to bottom.

For each candidate, in order (a candidate sees the items earlier candidates of the batch wrote):

1. evidence - the candidate against every current item of its type, nearest first
              (core/reconcile_evidence.gather), and who stands behind it (its Grounding: a ref to a user
              message, or the caller's own statement).
2. policy   - the decision table below: one outcome per candidate, with the rule that chose it and, when
              the rule rests on similarity alone, why a judge should look (Decision.uncertain).
3. judge    - optional: a configured model's answers for the uncertain decisions come back as `overrides`
              (state/adjudication asks; this module applies what can apply, and records what it answered).
4. apply    - merge into the item, supersede it (the old one stays readable, marked superseded, with the
              evidence), flag both in conflict, or insert.

The policy aims at what an agent needs: the state follows the user's newest word, never loses a statement,
and asks when it cannot know. Per item, nearest first; the first row that holds decides:

| evidence on the item                                                   | user's word | no user word |
|------------------------------------------------------------------------|-------------|--------------|
| the caller names it in `supersedes`                                    | supersede   | supersede*   |
| the candidate's text is the item's (same uid)                          | merge       | merge        |
| the candidate names what the item holds as retired ("instead of")      | supersede   | conflict?    |
| an aligned slot holds another value (contrast), score >= conflict      | supersede   | conflict?    |
|   (a statement breaking a property the item states: >= property_floor) |             |              |
| a restatement: the same words, or the same plus detail with no value   | merge       | merge        |
|   in it (score >= merge, or a paraphrase from paraphrase_floor)        |             |              |
| the user's message names what the item holds and the candidate does   | supersede   | -            |
|   not, the two differing in one slot of a shared frame                 |             |              |
| change language ("now", "no longer"), score >= change_floor            | supersede   | conflict?    |
| the same frame about another object or measure (distinction)           | next item   | next item    |
| one short span swapped, score >= merge (with the user's message, only  | supersede   | conflict?    |
|   when the message says the new words)                                 |             |              |
| score >= merge, another scope, polarity or complement                  | supersede   | conflict?    |
| score >= merge and nothing above                                       | merge?      | merge?       |
| otherwise                                                              | next item   | next item    |

and when no item decides: insert, and insert? beside a nearest item scoring >= rival_floor that no rule
linked (not a distinction): a paraphrase, a change or a contradiction in other words looks like that as often
as a new item does, so the judge is asked and, without one, the write's response names the possible rival and
how to retire it. (*) an extractor's `supersedes` needs the user's word, a caller's does not. "?" marks a
decision made on similarity alone or one nobody's word settles (Decision.uncertain): put to the judge when
there is one. A merge needs a restatement or nothing suspicious at all, so a possible contradiction is kept,
never merged ("when in doubt between merge and keep, keep"). Grounding alone decides nothing: a user who
restates an item merges into it, and one who adds a statement about something near it inserts a new item.

No I/O: similarities come in as a function over items the caller has embedded.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from typing import Any

from taskmem.core.reconcile_evidence import NOT_GROUNDED, Evidence, Grounding, Similarity, gather
from taskmem.core.state_items import SUPERSEDED, Candidate, StateItem, filter_refs, merge_items, validate_item

MAX_CANDIDATES = 25
TOPIC_BOOST = 0.02
# The ref a caller's own statement (AddDecision, AddError) carries while it is reconciled: it stands for the
# caller's word as a user message's id does for an extracted item, and is never stored.
STATED_REF = "caller-statement"


class Outcome(enum.StrEnum):
    INSERT = "insert"
    MERGE = "merge"
    SUPERSEDE = "supersede"
    CONFLICT = "conflict"
    DROP = "drop"


@dataclasses.dataclass(frozen=True)
class ReconcileThresholds:
    """Per embedding model. Scores are cosine (+ TOPIC_BOOST when topics overlap, capped at 1.0).

    merge            - at or above, a restatement merges and an unexplained difference in the same frame is a
                       conflict; below, an item is a match only by what the words say.
    conflict         - least score for a contrasting slot to be about the same thing.
    alignment        - least word-alignment ratio (0-1) for two texts to share a frame.
    named_floor      - least cosine for a named old value (by the candidate or the user) to point at an item.
    paraphrase_floor - least score for a paraphrase (same words once synonyms are folded) to merge.
    change_floor     - least score for change language ("now", "no longer", "switched") to point at an item.
    property_floor   - least score for a statement that breaks a property the item states (the property
                       lexicon, not cosine, relates the two, so it is low).
    rival_floor      - least score for the nearest item to be named as a possible rival of an inserted
                       candidate (and the insert put to the judge): below it, no seen restatement, change or
                       contradiction was found.
    """

    merge: float
    conflict: float
    alignment: float = 0.5
    named_floor: float = 0.3
    paraphrase_floor: float = 0.4
    change_floor: float = 0.6
    property_floor: float = 0.1
    rival_floor: float = 0.45
    topic_boost: float = TOPIC_BOOST
    max_candidates: int = MAX_CANDIDATES

    def __post_init__(self) -> None:
        for field in ("merge", "conflict", "alignment", "named_floor", "paraphrase_floor", "change_floor",
                      "property_floor", "rival_floor"):
            value = getattr(self, field)
            if not -1.0 <= value <= 1.0:
                raise ValueError(f"{field}: {value} is outside [-1, 1]")
        if not 0 < self.max_candidates <= 1000:
            raise ValueError(f"max_candidates: {self.max_candidates} is outside 1..1000")


# The seed's numbers (tuned for another model): the fallback for an embedding model nobody calibrated.
SEED_THRESHOLDS = ReconcileThresholds(merge=0.92, conflict=0.85, rival_floor=0.92)


@dataclasses.dataclass(frozen=True)
class BatchMessage:
    """A message a candidate may cite: when it was written, whether the user wrote it, and (for the user's)
    what it says."""

    created_at: int
    from_user: bool
    text: str = ""


@dataclasses.dataclass(frozen=True)
class Decision:
    """What happened to one candidate, for audit and the extraction event.

    existing_uid is the item merged into, superseded or conflicted with (None for insert and drop);
    similarity is their raw cosine and score the boosted one (None when not compared); rule names the row
    of the policy (drops: invalid, no_valid_refs, over_cap, resurrects_superseded); evidence is what it
    saw (for supersede, what is stored on the old item); uncertain says why a judge should look ("" when
    the words decided); nearest_uid is, for an insert, the nearest item of its type."""

    outcome: Outcome
    candidate_uid: str | None
    existing_uid: str | None = None
    similarity: float | None = None
    score: float | None = None
    rule: str = ""
    evidence: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    detail: str = ""
    nearest_uid: str | None = None
    uncertain: str = ""


ADJUDICATED_RULE = "adjudicated"
ADJUDICABLE = (Outcome.MERGE, Outcome.SUPERSEDE, Outcome.CONFLICT, Outcome.INSERT)


@dataclasses.dataclass(frozen=True)
class Adjudication:
    """A judge's answer for one uncertain candidate: the outcome (the judge's word as given; only ADJUDICABLE
    values apply), the existing item it is about (None for insert), the model, its short reason, why the
    candidate was asked, and why there is no answer when there is none."""

    outcome: str
    target_uid: str | None
    model: str
    reason: str = ""
    uncertain: str = ""
    error: str = ""


@dataclasses.dataclass(frozen=True)
class Prepared:
    """prepare_candidates' answer: the valid items (refs filtered, times set), a DROP decision for each
    candidate left out, how many were given, and the messages they may cite."""

    items: list[StateItem]
    drops: list[Decision]
    extracted: int
    batch: Mapping[str, BatchMessage]
    coercions: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class ReconcileResult:
    """decisions: one per candidate given, drops first then in order. writes: the final state of every item
    to persist, each once, in the order first touched. inserted: the uids among writes that are new rows."""

    decisions: list[Decision]
    writes: list[StateItem]
    inserted: list[str]


def prepare_candidates(candidates: Sequence[Candidate], batch: Mapping[str, BatchMessage],
                       max_candidates: int = MAX_CANDIDATES, refs_required: bool = True) -> Prepared:
    """Validate candidates before anything is embedded: the first `max_candidates` (the rest DROP over_cap),
    each through validate_item (DROP invalid), its refs filtered to messages of `batch`. A candidate whose
    refs all fall away is dropped (no_valid_refs) when it had refs or `refs_required` (extraction: every item
    needs the messages it came from); an agent's item may come with none (the agent is the evidence).
    created_at and last_seen_at become the newest ref's time (or `now`, below, for an item without refs)."""
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
        given = bool(item.refs)
        item.refs = filter_refs(item.refs, batch)
        if not item.refs and (given or refs_required):
            drops.append(Decision(Outcome.DROP, item.uid, rule="no_valid_refs",
                                  detail="no ref is a message id of this batch"))
            continue
        if item.refs:
            item.created_at = item.last_seen_at = max(batch[ref].created_at for ref in item.refs)
        items.append(item)
    return Prepared(items, drops, len(candidates), batch, coercions)


def reconcile_candidates(prepared: Prepared, existing: Sequence[StateItem], similarity: Similarity,
                         thresholds: ReconcileThresholds, now: int = 0,
                         overrides: Mapping[int, Adjudication] | None = None) -> ReconcileResult:
    """The pipeline: decide each prepared item against the thread's items (any status: superseded ones are
    never compared or resurrected) and the batch's earlier candidates, apply the judge's answers where they
    can apply, and say what to write. `similarity(candidate, other)` is their cosine (the caller embeds every
    prepared item first); `now` stamps items that cite no message. Pure: nothing passed in is mutated."""
    working: dict[str, StateItem] = {item.uid: dataclasses.replace(item) for item in existing}
    touched: dict[str, None] = {}
    inserted: list[str] = []
    decisions: list[Decision] = list(prepared.drops)
    for index, original in enumerate(prepared.items):
        candidate = dataclasses.replace(original)
        if not candidate.refs:
            candidate.created_at = candidate.last_seen_at = now
        grounding = grounding_of(candidate, prepared.batch)
        decision = decide(candidate, working, similarity, thresholds, grounding)
        if overrides and index in overrides:
            decision = _judged(decision, overrides[index], candidate, working, similarity, thresholds, grounding)
        decisions.append(decision)
        _apply(decision, candidate, working, touched, inserted)
    return ReconcileResult(decisions, [working[uid] for uid in touched], inserted)


def grounding_of(candidate: StateItem, batch: Mapping[str, BatchMessage]) -> Grounding:
    """Who stands behind the candidate: its first ref to a user message (or the caller's statement) and the
    words of every user message it cites."""
    heard = [ref for ref in candidate.refs if ref in batch and batch[ref].from_user]
    if not heard:
        return NOT_GROUNDED
    return Grounding(heard[0], " ".join(batch[ref].text for ref in heard if batch[ref].text))


def decide(candidate: StateItem, working: Mapping[str, StateItem], similarity: Similarity,
           thresholds: ReconcileThresholds, grounding: Grounding) -> Decision:
    """The policy (the module docstring's table) for one candidate against the thread as it stands."""
    same = working.get(candidate.uid)
    if same is not None and not same.active:
        return Decision(Outcome.DROP, candidate.uid, same.uid, 1.0, 1.0, "resurrects_superseded",
                        detail="same text as a superseded item: never resurrected")
    # Nearest first by similarity alone; the words are read only for the items the policy gets to.
    scored = sorted(((float(similarity(candidate, item)),
                      thresholds.topic_boost if set(candidate.topic_tags) & set(item.topic_tags) else 0.0, item)
                     for item in working.values()
                     if item.type_tag == candidate.type_tag and item.active and item.uid != candidate.uid),
                    key=lambda entry: (-min(1.0, entry[0] + entry[1]), entry[2].uid))

    def evidence_on(cosine: float, boost: float, item: StateItem) -> Evidence:
        return gather(candidate, item, cosine, boost, thresholds.alignment, grounding)

    named = next((entry for entry in scored if entry[2].uid == candidate.supersedes), None)
    if named is not None and (candidate.source == "agent" or grounding.user):
        return _keep(candidate, evidence_on(*named), grounding, "explicit_supersedes", supersede=True,
                     matched_by="stated by the caller" if candidate.source == "agent" else "named by the extractor")
    if same is not None:
        return Decision(Outcome.MERGE, candidate.uid, same.uid, 1.0, 1.0, "same_uid")
    distinct: dict[str, Any] = {}
    for e in (evidence_on(*entry) for entry in scored):
        if e.named_by_candidate and e.cosine >= thresholds.named_floor:
            return _keep(candidate, e, grounding, "names_what_it_replaces", named=list(e.named_by_candidate))
        if e.contrast is not None and (e.score >= thresholds.conflict
                                       or (e.contrast.kind == "property" and e.score >= thresholds.property_floor)):
            return _keep(candidate, e, grounding, "another_value", contrast=e.contrast.as_evidence())
        if e.restatement and (e.score >= thresholds.merge
                              or (e.paraphrase is not None and e.score >= thresholds.paraphrase_floor)):
            return Decision(Outcome.MERGE, candidate.uid, e.item.uid, e.cosine, e.score,
                            "paraphrase" if e.paraphrase else "restatement",
                            {"paraphrase": e.paraphrase} if e.paraphrase else {})
        if grounding.user and e.named_by_user and e.one_slot and e.cosine >= thresholds.named_floor:
            return _keep(candidate, e, grounding, "user_names_the_old_value", named=list(e.named_by_user))
        if e.change is not None and e.score >= thresholds.change_floor:
            return _keep(candidate, e, grounding, "change_language")
        if e.distinction is not None:
            distinct = distinct or {"item": e.item.uid, **e.distinction.as_evidence()}
            continue
        if e.swap is not None and e.score >= thresholds.merge and not (grounding.words and not e.user_says_new):
            return _keep(candidate, e, grounding, "one_slot_swapped", swap=list(e.swap))
        if e.score >= thresholds.merge and (e.scope_differs or e.polarity_differs or e.complement_differs):
            words = f"{' '.join(sorted(e.dropped)) or '-'} / {' '.join(sorted(e.added)) or '-'}"
            return _keep(candidate, e, grounding, "another_complement", words=words)
        if e.score >= thresholds.merge:
            return dataclasses.replace(
                Decision(Outcome.MERGE, candidate.uid, e.item.uid, e.cosine, e.score, "duplicate"),
                uncertain=f"merged on similarity alone, score {e.score:.3f}")
    if not scored:
        return Decision(Outcome.INSERT, candidate.uid, rule="no_match")
    cosine, boost, nearest = scored[0]
    score = min(1.0, cosine + boost)
    if distinct:
        return Decision(Outcome.INSERT, candidate.uid, None, cosine, score, "distinct", {"distinct": distinct},
                        _slot_words(distinct), nearest.uid)
    if score < thresholds.rival_floor:
        return Decision(Outcome.INSERT, candidate.uid, None, cosine, score, "no_match", nearest_uid=nearest.uid)
    # Near, yet no rule links them: a paraphrase, a change or a contradiction in other words reads like this as
    # often as a new item does. Inserting keeps both; the judge (or the caller, told of the rival) settles it.
    return Decision(Outcome.INSERT, candidate.uid, None, cosine, score, "no_match",
                    detail=f"possible rival [{nearest.uid}] {nearest.text!r}: if it replaces that item, send it"
                           f" again with supersedes: {nearest.uid}; if the two say the same, retire one"
                           f" (SetStateItemStatus)", nearest_uid=nearest.uid,
                    uncertain=f"near an item no rule links it to, score {score:.3f}")


def _keep(candidate: StateItem, e: Evidence, grounding: Grounding, rule: str, supersede: bool | None = None,
          **seen: Any) -> Decision:
    """Both statements are kept: the candidate supersedes the item when the user's word (or the caller's
    `supersedes`) is behind it, and otherwise the two stand in conflict until someone settles it."""
    if supersede is None:
        supersede = grounding.user
    if supersede:
        evidence = {"trigger": e.change, "ref_msg_id": grounding.user_ref, "candidate_uid": candidate.uid,
                    "rule": rule, "similarity": round(e.cosine, 4), **seen}
        return Decision(Outcome.SUPERSEDE, candidate.uid, e.item.uid, e.cosine, e.score, rule, evidence)
    detail = _slot_words(seen["contrast"]) if "contrast" in seen else (
        f"swap: {seen['swap'][0]} / {seen['swap'][1]}" if "swap" in seen else seen.get("words", ""))
    return Decision(Outcome.CONFLICT, candidate.uid, e.item.uid, e.cosine, e.score, rule, seen, detail,
                    uncertain=f"{rule.replace('_', ' ')} with nobody's word behind the change, score {e.score:.3f}")


def _judged(builtin: Decision, answer: Adjudication, candidate: StateItem, working: Mapping[str, StateItem],
            similarity: Similarity, thresholds: ReconcileThresholds, grounding: Grounding) -> Decision:
    """The decision with a judge's answer applied, or the builtin one when the answer cannot apply; both carry
    evidence["adjudication"]: the builtin outcome, the model, its answer and whether it applied."""
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
    if outcome is Outcome.SUPERSEDE and not grounding.user:
        return keep("a supersede needs the user's word (a ref to a user message) behind the candidate")
    if outcome is builtin.outcome and (target.uid if target else None) == builtin.existing_uid:
        return dataclasses.replace(builtin, evidence={**builtin.evidence,
                                                      "adjudication": {**record, "applied": True, "agreed": True}})
    record = {**record, "applied": True, "agreed": False}
    detail = f"{answer.model} answered {outcome.value} (builtin {builtin.outcome.value}, {builtin.rule})" + (
        f": {answer.reason}" if answer.reason else "")
    if target is None:
        return Decision(Outcome.INSERT, candidate.uid, None, builtin.similarity, builtin.score, ADJUDICATED_RULE,
                        {"adjudication": record}, detail, builtin.nearest_uid or builtin.existing_uid)
    cosine = float(similarity(candidate, target))
    score = min(1.0, cosine + (thresholds.topic_boost if set(candidate.topic_tags) & set(target.topic_tags) else 0))
    evidence: dict[str, Any] = {"adjudication": record}
    if outcome is Outcome.SUPERSEDE:  # the evidence stored on the old item, as the policy's supersessions store it
        evidence = {"trigger": None, "ref_msg_id": grounding.user_ref, "candidate_uid": candidate.uid,
                    "rule": ADJUDICATED_RULE, "similarity": round(cosine, 4),
                    "matched_by": f"adjudicated by {answer.model}", **evidence}
    return Decision(outcome, candidate.uid, target.uid, cosine, score, ADJUDICATED_RULE, evidence, detail)


def _slot_words(evidence: Mapping[str, Any]) -> str:
    """The slot a contrast or distinction saw, in words for the report: "choice: in vials / in syringes"."""
    return f"{evidence['kind']}: {evidence['old']} / {evidence['new']}"


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
    candidate.supersedes = None
    if outcome is Outcome.SUPERSEDE:
        assert old_uid is not None
        old = working[old_uid]
        working[old_uid] = dataclasses.replace(old, status=SUPERSEDED, replaced_by=candidate.uid,
                                               supersession_evidence=dict(decision.evidence))
        touched[old_uid] = None
        candidate.supersedes = old_uid
        candidate.conflict = False  # the user's word settled it
    elif outcome is Outcome.CONFLICT:
        assert old_uid is not None
        working[old_uid] = dataclasses.replace(working[old_uid], conflict=True)
        touched[old_uid] = None
        candidate.conflict = True
    previous = working.get(candidate.uid)
    # A caller's explicit supersession may name a text already in the thread: it is updated, not duplicated.
    working[candidate.uid] = merge_items(previous, candidate) if previous is not None and previous.active \
        else candidate
    touched[candidate.uid] = None
    if previous is None:
        inserted.append(candidate.uid)


__all__ = [
    "ADJUDICABLE", "ADJUDICATED_RULE", "MAX_CANDIDATES", "SEED_THRESHOLDS", "STATED_REF", "TOPIC_BOOST",
    "Adjudication", "BatchMessage", "Decision", "Outcome", "Prepared", "ReconcileResult", "ReconcileThresholds",
    "decide", "grounding_of", "prepare_candidates", "reconcile_candidates",
]
