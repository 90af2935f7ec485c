"""Reconciliation: where a new state item goes in a thread's state. Decide what is certain; ask the rest.

For each candidate, in order (a candidate sees the items earlier candidates of the batch wrote), the policy
compares it with every current item of its type, nearest first, and the first row that holds decides:

| evidence                                                          | outcome   | right / wrong on blind sets  |
|-------------------------------------------------------------------|-----------|------------------------------|
| the same text (same uid)                                          | merge     | (identity)                   |
| the caller's `supersedes` names the item (an extractor's: with    | supersede | (the caller's word)          |
|   the user's word behind it, else ask)                            |           |                              |
| the same words, or the same plus detail with no value in it (no   | merge     | 2 / 0 on all sets (rare on   |
|   number, code, name, negation or scope word, nothing a           |           |   adversarial sets)          |
|   preposition introduces: same_words)                             |           |                              |
| the user's message names a word of the item as retired ("instead  | supersede | blind16 7 / 0 (+2 harmless), |
|   of X", "no more X", "X can wait", "from X to Y"), or the        |           |   blind15 9 / 0; seen sets   |
|   candidate's own words replace it ("instead of X", "drop X") with|           |   156 / 0                    |
|   the user's or the caller's word behind it; and the candidate    |           |                              |
|   gives another value (names_retired)                             |           |                              |
| the nearest item scores >= ask and the user's message answers     |           |                              |
|   the question itself: "still", "like we said" with the same      | merge     | blind15 3 / 0, seen 10 / 0   |
|   values (confirms); "also", "too" (adds)                         | insert    | blind16 2 / 0, blind15 2 / 0 |
| the nearest item scores >= ask: near, and no row above explains   | ask       | never wrong; blind16 44 of 80|
|   how (another value, scope, subject, object, amount, or plain    |           |   asked (20 contradictions   |
|   similarity)                                                     |           |   asked rightly)             |
| otherwise: far from every item                                    | insert    | blind16 5 / 0, blind15 6 / 1 |

"ask" keeps both items current and links them (each names the other in conflict_with): every view shows the
pair once as an open question, "does B replace A, stand beside it, or say the same?", with the calls that
settle each answer, and so does the write's response. Who answers: a configured model first (state/
adjudication; its answer comes back here as an override and is applied as a decision with its evidence),
else the calling agent (StateService.AnswerQuestion, MCP answer_question), else a person in the web view.
REPLACES supersedes A by B, STANDS_BESIDE unlinks them, SAME merges B into A. Only the rows above decide
alone; a word list that does not carry on a blind set written after it is deleted.

No I/O: similarities come in as a function over items the caller has embedded.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from taskmem.core.reconcile_words import Retirement, adds, confirms, names_retired, same_modifiers, same_values, same_words
from taskmem.core.state_items import SUPERSEDED, Candidate, StateItem, filter_refs, merge_items, validate_item

MAX_CANDIDATES = 25
TOPIC_BOOST = 0.02
# The ref a caller's own statement (AddDecision, AddError) carries while it is reconciled: it stands for the
# caller's word as a user message's id does for an extracted item, and is never stored.
STATED_REF = "caller-statement"
Similarity = Callable[[StateItem, StateItem], float]


class Outcome(enum.StrEnum):
    INSERT = "insert"
    MERGE = "merge"
    SUPERSEDE = "supersede"
    ASK = "ask"
    DROP = "drop"


class Answer(enum.StrEnum):
    """An answer to an open question "does B (the candidate) replace A, stand beside it, or say the same?"."""

    REPLACES = "replaces"
    STANDS_BESIDE = "stands_beside"
    SAME = "same"


@dataclasses.dataclass(frozen=True)
class ReconcileThresholds:
    """Per embedding model. Scores are cosine (+ topic_boost when topics overlap, capped at 1.0).

    ask        - least score for the nearest item to be near enough that a candidate no rule decides is asked
                 about; below it the candidate is far from every item and inserted.
    named_floor - least cosine for the same words or a named retirement to point at an item."""

    ask: float
    named_floor: float = 0.3
    topic_boost: float = TOPIC_BOOST
    max_candidates: int = MAX_CANDIDATES

    def __post_init__(self) -> None:
        for field in ("ask", "named_floor"):
            if not -1.0 <= (value := getattr(self, field)) <= 1.0:
                raise ValueError(f"{field}: {value} is outside [-1, 1]")
        if not 0 < self.max_candidates <= 1000:
            raise ValueError(f"max_candidates: {self.max_candidates} is outside 1..1000")


# For an embedding model nobody calibrated: only near-identical texts are asked about.
SEED_THRESHOLDS = ReconcileThresholds(ask=0.85)


@dataclasses.dataclass(frozen=True)
class BatchMessage:
    """A message a candidate may cite: when it was written, who said it (user, agent, document, tool) and
    what it says."""

    created_at: int
    from_user: bool
    text: str = ""
    said_by: str = ""

    @property
    def speaker(self) -> str:
        return self.said_by or ("user" if self.from_user else "agent")


@dataclasses.dataclass(frozen=True)
class Grounding:
    """Who stands behind a candidate: `user_ref` is its first ref to a user message (or the caller's own
    statement), None otherwise; `words` what the user said in the messages it cites; `said_by` who said the
    message behind it (user, agent, document, tool; "agent" for an item with no ref) and `message` its words."""

    user_ref: str | None = None
    words: str = ""
    said_by: str = "agent"
    message: str = ""

    @property
    def user(self) -> bool:
        return self.user_ref is not None


@dataclasses.dataclass(frozen=True)
class Decision:
    """What happened to one candidate, for audit and the extraction event.

    existing_uid is the item merged into, superseded or asked about (None for insert and drop); similarity
    is their raw cosine and score the boosted one (None when not compared); rule names the row of the policy
    (drops: invalid, no_valid_refs, over_cap, resurrects_superseded); evidence is what it saw (for supersede,
    what is stored on the old item); nearest_uid is, for an insert, the nearest item of its type."""

    outcome: Outcome
    candidate_uid: str | None
    existing_uid: str | None = None
    similarity: float | None = None
    score: float | None = None
    rule: str = ""
    evidence: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    detail: str = ""
    nearest_uid: str | None = None


ADJUDICATED_RULE = "adjudicated"


@dataclasses.dataclass(frozen=True)
class Adjudication:
    """A model's answer to one open question (an ASK decision): an Answer's value, or anything else for "not
    settled" (the question stays open); the model, its short reason, and why there is no answer when none."""

    answer: str
    model: str
    reason: str = ""
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
    created_at and last_seen_at become the newest ref's time (or `now` for an item without refs)."""
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
    """Decide each prepared item against the thread's items (superseded ones are never compared or
    resurrected) and the batch's earlier candidates, apply the model's answers to the questions it settled,
    and say what to write. `similarity(candidate, other)` is their cosine; `now` stamps items that cite no
    message. Pure: nothing passed in is mutated."""
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
        if overrides and index in overrides and decision.outcome is Outcome.ASK:
            decision = answered(decision, overrides[index], grounding)
        decisions.append(decision)
        _apply(decision, candidate, working, touched, inserted)
    return ReconcileResult(decisions, [working[uid] for uid in touched], inserted)


def grounding_of(candidate: StateItem, batch: Mapping[str, BatchMessage]) -> Grounding:
    """Who stands behind the candidate: its first ref to a user message (or the caller's statement), the
    words of every user message it cites, and who said the message behind it, with that message."""
    cited = [batch[ref] for ref in candidate.refs if ref in batch]
    heard = [ref for ref in candidate.refs if ref in batch and batch[ref].from_user]
    behind = next((m for m in cited if m.from_user), cited[0] if cited else None)
    said_by, message = (behind.speaker, behind.text) if behind is not None else ("agent", "")
    if not heard:
        return Grounding(None, "", said_by, message)
    return Grounding(heard[0], " ".join(batch[ref].text for ref in heard if batch[ref].text), said_by, message)


def decide(candidate: StateItem, working: Mapping[str, StateItem], similarity: Similarity,
           thresholds: ReconcileThresholds, grounding: Grounding) -> Decision:
    """The policy (the module docstring's table) for one candidate against the thread as it stands."""
    same = working.get(candidate.uid)
    if same is not None and not same.active:
        return Decision(Outcome.DROP, candidate.uid, same.uid, 1.0, 1.0, "resurrects_superseded",
                        detail="same text as a superseded item: never resurrected")
    scored = sorted(((float(similarity(candidate, item)), item) for item in working.values()
                     if item.type_tag == candidate.type_tag and item.active and item.uid != candidate.uid),
                    key=lambda entry: (-_score(entry[0], candidate, entry[1], thresholds), entry[1].uid))
    named = next((entry for entry in scored if entry[1].uid == candidate.supersedes), None)
    if named is not None and (candidate.source == "agent" or grounding.user):
        who = "stated by the caller" if candidate.source == "agent" else "named by the extractor"
        return _supersede(candidate, named[1], named[0], thresholds, grounding, "explicit_supersedes",
                          trigger="supersedes", matched_by=who)
    if same is not None:
        return Decision(Outcome.MERGE, candidate.uid, same.uid, 1.0, 1.0, "same_uid")
    for cosine, item in scored:
        if cosine < thresholds.named_floor:
            break
        if same_words(item.text, candidate.text):
            return Decision(Outcome.MERGE, candidate.uid, item.uid, cosine, _score(cosine, candidate, item, thresholds),
                            "same_words")
        retired = _retirement(item, candidate, grounding)
        if retired is not None:
            return _supersede(candidate, item, cosine, thresholds, grounding, "names_the_old_value",
                              trigger=f"{retired.where} names {', '.join(retired.named)} as retired",
                              named=list(retired.named))
    if named is not None:  # an extractor's supersedes with nobody's word behind it: asked
        return _ask(candidate, named[1], named[0], thresholds, "supersedes_unconfirmed")
    if not scored:
        return Decision(Outcome.INSERT, candidate.uid, rule="no_match")
    cosine, nearest = scored[0]
    score = _score(cosine, candidate, nearest, thresholds)
    if score >= thresholds.ask and grounding.user and grounding.words:
        # The user's own message answers the question: "still", "like we said" (the same), "also", "too" (beside).
        if confirms(grounding.words) and same_values(nearest.text, candidate.text):
            return Decision(Outcome.MERGE, candidate.uid, nearest.uid, cosine, score, "user_confirms")
        if adds(grounding.words) and same_modifiers(nearest.text, candidate.text):
            return Decision(Outcome.INSERT, candidate.uid, None, cosine, score, "user_adds", nearest_uid=nearest.uid)
    if score >= thresholds.ask:
        return _ask(candidate, nearest, cosine, thresholds, "near")
    return Decision(Outcome.INSERT, candidate.uid, None, cosine, score, "far", nearest_uid=nearest.uid)


def _score(cosine: float, candidate: StateItem, item: StateItem, thresholds: ReconcileThresholds) -> float:
    return min(1.0, cosine + (thresholds.topic_boost if set(candidate.topic_tags) & set(item.topic_tags) else 0.0))


def _retirement(item: StateItem, candidate: StateItem, grounding: Grounding) -> Retirement | None:
    """The item's value named as retired by the user's message, or by the candidate itself when the user's
    (or the caller's) word stands behind it."""
    if not grounding.user:
        return None
    if adds(grounding.words, retiring=True):  # "also ..., not the PDF": an addition first; asked
        return None
    return names_retired(item.text, candidate.text, grounding.words, "the user's message", spoken=True) \
        or names_retired(item.text, candidate.text, candidate.text, "the candidate", spoken=False)


def _supersede(candidate: StateItem, item: StateItem, cosine: float, thresholds: ReconcileThresholds,
               grounding: Grounding, rule: str, **seen: Any) -> Decision:
    evidence = {"trigger": None, "ref_msg_id": grounding.user_ref, "candidate_uid": candidate.uid, "rule": rule,
                "similarity": round(cosine, 4)} | seen
    return Decision(Outcome.SUPERSEDE, candidate.uid, item.uid, cosine, _score(cosine, candidate, item, thresholds),
                    rule, evidence)


def _ask(candidate: StateItem, item: StateItem, cosine: float, thresholds: ReconcileThresholds,
         rule: str) -> Decision:
    return Decision(Outcome.ASK, candidate.uid, item.uid, cosine, _score(cosine, candidate, item, thresholds), rule,
                    detail=question_text(item.uid, item.text, candidate.uid, candidate.text))


def question_text(old_uid: str, old_text: str, new_uid: str, new_text: str) -> str:
    """The open question of a pair, as every view asks it."""
    return f"does [{new_uid}] {new_text} replace [{old_uid}] {old_text}, stand beside it, or say the same?"


def answered(decision: Decision, answer: Adjudication, grounding: Grounding) -> Decision:
    """An ASK decision with a model's answer applied (REPLACES: supersede; STANDS_BESIDE: insert unlinked;
    SAME: merge), or kept open when the answer settles nothing; either way evidence["adjudication"] says what
    the model answered. A model retires nothing on an agent's, a document's or a tool's word alone: REPLACES
    applies only with the user's (or the caller's own statement's) word behind B; else the question stays open
    for the caller or a person (who may answer REPLACES themselves)."""
    record = {"model": answer.model, "answer": answer.answer, "reason": answer.reason, "error": answer.error,
              "question": decision.existing_uid}
    kind = next((a for a in Answer if a.value == answer.answer), None)
    if kind is Answer.REPLACES and not grounding.user:
        record = {**record, "error": f"replaces needs the user's word behind it (said by {grounding.said_by})"}
        kind = None
    if kind is None:
        return dataclasses.replace(decision, evidence={**decision.evidence, "adjudication": {**record, "applied": False}})
    record = {**record, "applied": True}
    detail = f"{answer.model} answered {kind.value}" + (f": {answer.reason}" if answer.reason else "")
    if kind is Answer.STANDS_BESIDE:
        return Decision(Outcome.INSERT, decision.candidate_uid, None, decision.similarity, decision.score,
                        ADJUDICATED_RULE, {"adjudication": record}, detail, decision.existing_uid)
    if kind is Answer.SAME:
        return dataclasses.replace(decision, outcome=Outcome.MERGE, rule=ADJUDICATED_RULE,
                                   evidence={"adjudication": record}, detail=detail)
    evidence = {"trigger": None, "ref_msg_id": None, "candidate_uid": decision.candidate_uid, "rule": ADJUDICATED_RULE,
                "similarity": round(decision.similarity or 0.0, 4), "matched_by": f"answered by {answer.model}",
                "adjudication": record}
    return dataclasses.replace(decision, outcome=Outcome.SUPERSEDE, rule=ADJUDICATED_RULE, evidence=evidence,
                               detail=detail)


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
        candidate.conflict = False  # settled
    elif outcome is Outcome.ASK:
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
    "ADJUDICATED_RULE", "MAX_CANDIDATES", "SEED_THRESHOLDS", "STATED_REF", "TOPIC_BOOST", "Adjudication", "Answer",
    "BatchMessage", "Decision", "Grounding", "Outcome", "Prepared", "ReconcileResult", "ReconcileThresholds",
    "Similarity", "answered", "decide", "grounding_of", "prepare_candidates", "question_text",
    "reconcile_candidates",
]
