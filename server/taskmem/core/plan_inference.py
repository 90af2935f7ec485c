"""Plan progress from messages: which plan items a progress message says are finished.

Pure and deterministic (no I/O, no model). The rules, as the README and the proto describe them:

1. The message is cut into clauses at sentence ends (". ", "!", "?", ";", newlines), at ": ",
   ", " and dashes set off by spaces, and at "but"/"however"; at "and"/"then"/"while" only when
   both sides name a step ("Finished step 3 and started step 4").
2. A clause names items by step number ("step 2", "steps 1-3", "steps 1, 2 and 3", "step #2",
   "step two", "2/5"; numbered from 1 in plan order), by ordinal ("the second step", "the last
   step"), or by item id (an id with a digit or punctuation anywhere, "m2"; a plain-word id such
   as "changelog" only as the clause's first word). A clause that names items and says nothing
   else ("Step 2 and step 3 done", "publish: completed") takes the verdict of the clause after it.
3. A clause says "finished" when it holds a completion word (done, complete(d), finished, ✓,
   passed, succeeded, ...) or a verb in the past tense ("pushed", "built"), and none of:
   a question mark; a negation (not, n't, never, cannot, no/without — except "no errors");
   a word of failure, partial or ongoing work (failing, blocked, stuck, almost, 60%, starting,
   working, retrying, waiting, skipping, ...); or, before the completion word, a word of intent
   or condition (will, going to, about to, next, need, if, once, when, until, before, after, ...).
4. A finished clause that names no item is matched against titles: the item whose title's
   content words (stemmed, stop words dropped) it covers best, when it covers at least half of
   them and at least two (one for a one-word title), and no other item scores as well. Without a
   completion word, the past-tense verb must be the title's own ("Built the image" finishes
   "Build the image"; "Updated the Dockerfile to build the image" finishes nothing). A clause of
   completion words alone ("Screenshots of the dashboard: done") is said of the clause before it.

Whether a claim is applied (dependencies completed, status not set by a caller) is decided by
applicable_claims; the store applies the result in the transaction that stores the message.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import operator
import re
from collections.abc import Sequence
from typing import NamedTuple, Protocol

from taskmem.core.messages import Kind, Role
from taskmem.core.plans import DONE, ItemStatus, StatusSource

# Only what an agent or a person writes about the work is read; tool output and the service's own
# messages (waits, stuck alerts, lifecycle notes) are not.
INFERRING_ROLES = frozenset({Role.AGENT, Role.USER})
INFERRING_KINDS = frozenset({Kind.TEXT, Kind.PROGRESS})
# Statuses an inference may turn into COMPLETED (when no caller set them).
_OPEN = frozenset({ItemStatus.PENDING, ItemStatus.IN_PROGRESS, ItemStatus.BLOCKED})
EVIDENCE_MAX = 200


class MatchedBy(enum.StrEnum):
    STEP_NUMBER = "step_number"
    ITEM_ID = "item_id"
    TITLE = "title"


class OutlineItem(Protocol):
    """What inference reads of a plan item (a PlanItem, or the lighter ItemOutline the store reads)."""

    @property
    def id(self) -> str: ...
    @property
    def ordinal(self) -> int: ...
    @property
    def title(self) -> str: ...
    @property
    def status(self) -> ItemStatus: ...
    @property
    def status_source(self) -> StatusSource: ...
    @property
    def depends_on(self) -> list[str]: ...


class ItemOutline(NamedTuple):
    id: str
    ordinal: int
    title: str
    status: ItemStatus
    status_source: StatusSource
    depends_on: list[str]


@dataclasses.dataclass(frozen=True)
class Claim:
    """The message says this item is finished; evidence is the clause that says so."""

    item_id: str
    matched_by: MatchedBy
    evidence: str


def reads_message(role: Role, kind: Kind, content: str) -> bool:
    """Whether a message can claim anything: written by an agent or person, with a completion word in it.

    The last test is cheap and spares the store reading the plan for the many messages that cannot.
    """
    return role in INFERRING_ROLES and kind in INFERRING_KINDS \
        and any(_is_completion(word) for word in _words(_normalise(content)))


# --- words -------------------------------------------------------------------------------------

_NUMBER_WORDS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
    " seventeen eighteen nineteen twenty".split())}
_ORDINAL_WORDS = {w: n for n, w in enumerate(
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth"
    " fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split())}

_COMPLETION_WORDS = frozenset({
    "done", "complete", "completed", "completes", "finished", "finishes", "✓", "succeeded", "succeeds",
    "successful", "successfully", "passed", "passes", "ok", "okay", "green", "accomplished", "achieved", "wrapped",
})
# Past tenses that do not end in -ed, mapped to the verb (for title matching as well).
_IRREGULAR = {
    "built": "build", "rebuilt": "rebuild", "made": "make", "wrote": "write", "written": "write",
    "rewrote": "rewrite", "rewritten": "rewrite", "ran": "run", "sent": "send", "got": "get", "gotten": "get",
    "took": "take", "taken": "take", "did": "do", "found": "find", "gave": "give", "given": "give",
    "bought": "buy", "brought": "bring", "chose": "choose", "chosen": "choose", "drew": "draw", "drawn": "draw",
    "spun": "spin", "understood": "understand", "won": "win", "began": "begin", "begun": "begin",
    "broke": "break", "broken": "break", "held": "hold", "kept": "keep", "left": "leave", "paid": "pay",
}
_IRREGULAR_COMPLETION = frozenset(_IRREGULAR) - {"began", "begun", "broke", "broken", "held", "kept", "left"}
# Words ending in -ed that do not say something was finished (and are not vetoes either).
_NEUTRAL_ED = frozenset({
    "needed", "required", "expected", "planned", "scheduled", "supposed", "intended", "wanted", "proposed",
    "suggested", "requested", "asked", "based", "called", "named", "related", "limited", "hundred", "embed",
    "shred", "bed", "red", "wed", "assigned", "allowed", "allocated", "estimated", "approved",
})
# Anywhere in a clause, these mean the step is not (known to be) finished.
_VETO = frozenset({
    "not", "never", "cannot", "no", "without", "nope", "neither", "nor",
    "fail", "fails", "failed", "failing", "failure", "failures", "error", "errors", "errored", "broken", "broke",
    "crash", "crashed", "crashes", "crashing", "stuck", "blocked", "blocking", "blocker", "timeout", "timed",
    "exception", "flaky", "denied", "refused", "rejected", "aborted", "interrupted", "reverted", "undone",
    "rollback", "rolled",
    "almost", "nearly", "partially", "partly", "half", "halfway", "mostly",
    "start", "starts", "starting", "started", "begin", "begins", "beginning", "began", "begun", "working",
    "progress", "ongoing", "underway", "running", "still", "continuing", "resuming", "kicking", "kicked",
    "retry", "retrying", "retried", "retries", "trying", "tried", "attempting", "attempted",
    "skip", "skips", "skipping", "skipped", "waiting", "wait", "pending", "queued", "paused", "stopped",
    "cancelled", "canceled", "postponed", "deferred", "delayed", "stalled", "hanging", "hung",
})
# Before the completion word, these make it a plan, a condition or a possibility.
_INTENT = frozenset({
    "will", "'ll", "ll", "going", "gonna", "about", "shall", "should", "must", "need", "needs", "requires",
    "depends", "want", "wants", "plan", "planning", "plans", "let's", "lets", "next", "then", "soon", "later",
    "tomorrow", "todo", "to-do", "if", "once", "when", "whenever", "until", "till", "unless", "before", "after",
    "can", "could", "may", "might", "would", "hope", "hopefully", "expect", "waiting",
})
_NO = frozenset({"no", "without", "zero", "0"})
_HARMLESS_AFTER_NO = frozenset({
    "error", "errors", "issue", "issues", "problem", "problems", "failure", "failures", "warning", "warnings",
    "regressions", "regression", "conflicts", "conflict",
})
# Words that carry nothing: dropped from titles and clauses, and ignored when deciding a clause is bare.
_STOP = frozenset({
    "the", "a", "an", "to", "and", "or", "of", "in", "into", "on", "onto", "for", "with", "from", "at", "by",
    "as", "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "it", "its", "this", "that",
    "these", "those", "all", "both", "also", "now", "i", "we", "our", "my", "me", "us", "so", "just", "up",
})
_BARE_FILLER = _STOP | {"step", "steps", "item", "items", "#", "number", "no."}

# --- references --------------------------------------------------------------------------------

_NUM = r"(?:\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
_RANGE = rf"{_NUM}(?:\s*/\s*\d{{1,3}})?(?:\s*(?:-|–|to|through|thru)\s*{_NUM})?"
_LIST = rf"{_RANGE}(?:\s*(?:,\s*and|,|and|&|\+)\s*(?:steps?\s*)?#?\s*{_RANGE})*"
_STEP_NUMBERS = re.compile(rf"\b(?:steps?|items?)\s*(?:no\.\s*|number\s*)?#?\s*(?P<list>{_LIST})(?!\w|\.\w)")
_ORDINAL = (r"(?:\d{1,3}(?:st|nd|rd|th)|last|final|"
            + "|".join(sorted(_ORDINAL_WORDS, key=len, reverse=True)) + ")")
_STEP_ORDINALS = re.compile(rf"\b(?P<ordinal>{_ORDINAL})\s+(?:steps?|items?)\b")
_ONE_NUMBER = re.compile(rf"(?P<a>{_NUM})(?:\s*/\s*\d{{1,3}})?(?:\s*(?:-|–|to|through|thru)\s*(?P<b>{_NUM}))?")

_ID_RUN = re.compile(r"[\w.-]+")
_CLAUSE_END = re.compile(r"[;!?\n]+|[.:,](?=\s|$)|\s[—–-]+\s|[—–]")
_ALWAYS_SPLIT = re.compile(r"\b(?:but|however|though|although|whereas)\b")
_SPLIT_IF_BOTH_NAME = re.compile(r"\b(?:and|then|while|after that|afterwards)\b")
_TOKEN = re.compile(r"✓|%|#|[a-z0-9]+(?:['._/:-][a-z0-9]+)*")
_PERCENT = re.compile(r"^(\d{1,3})%$")


@dataclasses.dataclass
class _Clause:
    text: str
    start: int
    refs: list[tuple[int, MatchedBy]]  # (ordinal, how) of the items it names
    question: bool
    verdict: bool | None = None  # None: bare (names items, says nothing else)


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def _numbered_refs(text: str, count: int) -> list[tuple[int, int, list[tuple[int, MatchedBy]]]]:
    """(start, end, refs) of each "step N…" and "Nth step" span; out-of-plan numbers are dropped."""
    spans = []
    for match in _STEP_NUMBERS.finditer(text):
        ordinals: list[int] = []
        for part in _ONE_NUMBER.finditer(match.group("list")):
            first = _number(part.group("a"))
            last = _number(part.group("b")) if part.group("b") else first
            ordinals.extend(range(first - 1, last) if last >= first else [])
        refs = [(o, MatchedBy.STEP_NUMBER) for o in ordinals if 0 <= o < count]
        spans.append((match.start(), match.end(), refs))
    for match in _STEP_ORDINALS.finditer(text):
        word = match.group("ordinal")
        if word in ("last", "final"):
            ordinal = count - 1
        elif word[0].isdigit():
            ordinal = int(word[:-2]) - 1
        else:
            ordinal = _ORDINAL_WORDS[word] - 1
        spans.append((match.start(), match.end(), [(ordinal, MatchedBy.STEP_NUMBER)] if 0 <= ordinal < count else []))
    return spans


def _is_plain_word(item_id: str) -> bool:
    return item_id.isalpha()


@dataclasses.dataclass(frozen=True)
class _PlanIndex:
    """What matching needs of a plan, worked out once per plan (ids and titles do not change)."""

    ids: dict[str, int]  # lower-cased ids with a digit or punctuation → ordinal
    plain_ids: dict[str, int]  # lower-cased plain-word ids → ordinal
    id_of: dict[int, str]  # ordinal → id
    titles: dict[int, frozenset[str]]  # ordinal → title stems, for titles with content words
    postings: dict[str, list[int]]  # title stem → ordinals of the titles that have it


@functools.lru_cache(maxsize=256)
def _plan_index(outline: tuple[tuple[str, int, str], ...]) -> _PlanIndex:
    ids: dict[str, int] = {}
    plain_ids: dict[str, int] = {}
    for item_id, ordinal, _ in outline:
        if _is_plain_word(item_id):
            plain_ids.setdefault(item_id.lower(), ordinal)
        elif not item_id.isdigit():
            ids.setdefault(item_id.lower(), ordinal)
    titles = {ordinal: stems for _, ordinal, title in outline if (stems := content_stems(title))}
    postings: dict[str, list[int]] = {}
    for ordinal, stems in titles.items():
        for word in stems:
            postings.setdefault(word, []).append(ordinal)
    return _PlanIndex(ids, plain_ids, {ordinal: item_id for item_id, ordinal, _ in outline}, titles, postings)


_INDEX_KEY = operator.attrgetter("id", "ordinal", "title")


def _id_refs(text: str, index: _PlanIndex) -> list[tuple[int, int, list[tuple[int, MatchedBy]]]]:
    """Spans of ids with a digit or punctuation in them (an id like "m2" is no English word).

    An id matches a whole run of id characters (letters, digits, '_', '-', '.'), less a trailing
    '.' or '-': "m2." ends a sentence, "m22" and "m2-old" are other names.
    """
    ids = index.ids
    spans = []
    for match in _ID_RUN.finditer(text):
        run = match.group().rstrip(".-")
        if run in ids:
            spans.append((match.start(), match.start() + len(run), [(ids[run], MatchedBy.ITEM_ID)]))
    return spans


def _cut(text: str, spans: list[tuple[int, int, list[tuple[int, MatchedBy]]]]) -> list[_Clause]:
    """Clauses at punctuation outside reference spans, each with the references inside it."""
    inside = [False] * (len(text) + 1)
    for start, end, _ in spans:
        for i in range(start, end):
            inside[i] = True
    cuts: list[tuple[int, int, bool]] = []  # (end of clause, start of next, is question)
    for match in _CLAUSE_END.finditer(text):
        if not inside[match.start()]:
            cuts.append((match.start(), match.end(), "?" in match.group()))
    clauses = []
    begin = 0
    for end, resume, question in [*cuts, (len(text), len(text), False)]:
        refs = [ref for start, stop, span_refs in spans if begin <= start < end for ref in span_refs]
        named = [(start, stop) for start, stop, _ in spans if begin <= start < end]
        clauses.extend(_split_conjunctions(text, begin, end, named, refs, spans, question))
        begin = resume
    return [c for c in clauses if c.text.strip()]


def _split_conjunctions(text: str, begin: int, end: int, named: list[tuple[int, int]],
                        refs: list[tuple[int, MatchedBy]],
                        spans: list[tuple[int, int, list[tuple[int, MatchedBy]]]], question: bool) -> list[_Clause]:
    piece = text[begin:end]
    points = [begin + m.start() for m in _ALWAYS_SPLIT.finditer(piece)]
    for m in _SPLIT_IF_BOTH_NAME.finditer(piece):
        at = begin + m.start()
        if any(s < at for s, _ in named) and any(s > at for s, _ in named) \
                and not any(s <= at < e for s, e in named):
            points.append(at)
    bounds = [begin, *sorted(points), end]
    out = []
    for start, stop in zip(bounds, bounds[1:]):
        inner = [r for s, _, span_refs in spans if start <= s < stop for r in span_refs]
        out.append(_Clause(text[start:stop], start, inner, question))
    return out if points else [_Clause(piece, begin, refs, question)]


# --- verdicts ----------------------------------------------------------------------------------

def _is_past(word: str) -> bool:
    if word in _IRREGULAR_COMPLETION:
        return True
    return (len(word) >= 5 and word.endswith("ed") and not word.endswith("eed") and word not in _NEUTRAL_ED
            and word not in _VETO and not word.startswith("un"))


def _is_completion(word: str) -> bool:
    return word in _COMPLETION_WORDS or _is_past(word)


def _vetoed(word: str) -> bool:
    if word.endswith("n't") or word in ("dont", "didnt", "isnt", "wasnt", "hasnt", "havent", "cant", "wont", "arent"):
        return True
    percent = _PERCENT.match(word)
    if percent:
        return int(percent.group(1)) < 100
    if word.startswith("un") and _is_completion(word[2:]):
        return True  # unfinished, untested, unmerged
    return word in _VETO


def _words(text: str) -> list[str]:
    words = []
    for token in _TOKEN.findall(text):
        if token == "%" and words and words[-1].isdigit():
            words[-1] += "%"
        else:
            words.append(token)
    return words


def _finished(words: list[str], question: bool) -> bool:
    if question:
        return False
    first = next((i for i, w in enumerate(words) if _is_completion(w)), None)
    if first is None:
        return False
    for i, word in enumerate(words):
        if word in _NO and i + 1 < len(words) and words[i + 1] in _HARMLESS_AFTER_NO:
            continue  # "without errors", "no issues"
        if word in _HARMLESS_AFTER_NO and i and words[i - 1] in _NO:
            continue
        if _vetoed(word):
            return False
        if i < first and (word in _INTENT or word.endswith("'ll")):
            return False
    return True


def _judge(clause: _Clause, spans: list[tuple[int, int, list[tuple[int, MatchedBy]]]]) -> None:
    """Set clause.verdict: True/False, or None when it only names items."""
    text = list(clause.text)
    for start, end, _ in spans:  # blank out the reference spans: "step two" says nothing about finishing
        for i in range(max(start, clause.start), min(end, clause.start + len(text))):
            text[i - clause.start] = " "
    words = _words("".join(text))
    if clause.refs and all(w in _BARE_FILLER for w in words):
        clause.verdict = None
    else:
        clause.verdict = _finished(words, clause.question)


# --- titles ------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=16_384)
def stem(word: str) -> str:
    """A crude, stable stem so "built"/"build", "pushed"/"push", "verified"/"verify" meet."""
    w = _IRREGULAR.get(word, word)
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 \
                and not (suffix == "s" and w[-2:] in ("ss", "us", "is")):
            w = w[: -len(suffix)]
            break
    if w.endswith("ion") and len(w) >= 7:  # "provisioned" and "provision", "migrated" and "migration"
        w = w[:-3]
    if w.endswith("i"):
        w = w[:-1] + "y"
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeioulsz":
        w = w[:-1]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


def content_stems(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _words(text.lower()) if w not in _STOP and w not in ("✓", "%", "#"))


def _title_match(clause_text: str, index: _PlanIndex) -> int | None:
    """The one item whose title the clause covers best, if the clause says that item's work is done.

    Without a completion word, the past-tense verb must be the title's own: "Built the image"
    finishes "Build the image", "Updated the Dockerfile to build the image" finishes nothing.
    """
    words = _words(clause_text)
    said = content_stems(clause_text)
    generic = any(w in _COMPLETION_WORDS for w in words)
    verbs = {stem(w) for w in words if _is_past(w)}
    overlaps: dict[int, int] = {}  # only titles that share a word with the clause are looked at
    for word in said:
        for ordinal in index.postings.get(word, ()):
            overlaps[ordinal] = overlaps.get(ordinal, 0) + 1
    scored = []
    for ordinal, overlap in overlaps.items():
        title = index.titles[ordinal]
        if overlap >= min(2, len(title)) and overlap * 2 >= len(title) and (generic or not title.isdisjoint(verbs)):
            scored.append((overlap / len(title), overlap, ordinal))
    if not scored:
        return None
    scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
    if len(scored) > 1 and scored[1][:2] == scored[0][:2]:
        return None  # two items fit equally well: say nothing rather than guess
    return scored[0][2]


# --- the whole message -------------------------------------------------------------------------

def _join_lone_completions(clauses: list[_Clause]) -> list[_Clause]:
    """ "Screenshots of the dashboard: done": a clause of completion words alone that names nothing
    is said of the clause before it."""
    joined: list[_Clause] = []
    for clause in clauses:
        words = _words(clause.text)
        previous = joined[-1] if joined else None
        if previous is not None and not clause.refs and not previous.question and words \
                and all(w in _COMPLETION_WORDS or w in _STOP for w in words):
            gap = clause.start - (previous.start + len(previous.text))
            previous.text += " " * gap + clause.text
            previous.question = clause.question
        else:
            joined.append(clause)
    return joined


def _normalise(message: str) -> str:
    """Lower case and one check mark, keeping every offset so evidence can quote the original."""
    text = message.lower()
    if len(text) != len(message):  # a rare character whose lower case is longer ("İ"): keep it as it is
        text = "".join(c.lower() if len(c.lower()) == 1 else c for c in message)
    text = text.replace("[x]", "✓  ").replace("\u2019", "'").replace("\ufe0f", " ")
    return re.sub(r"[✔✅☑]", "✓", text)


def completion_claims(items: Sequence[OutlineItem], message: str) -> list[Claim]:
    """The items the message says are finished, in plan order, each once (first reason wins)."""
    text = _normalise(message)
    index = _plan_index(tuple(map(_INDEX_KEY, items)))
    plain_ids = index.plain_ids
    spans = _numbered_refs(text, len(items)) + _id_refs(text, index)
    clauses = _cut(text, spans)
    for clause in clauses:
        first = _words(clause.text)[:2]
        lead = first[1] if first and first[0] == "✓" and len(first) > 1 else (first[0] if first else "")
        if lead in plain_ids:
            clause.refs.append((plain_ids[lead], MatchedBy.ITEM_ID))
            start = clause.start + clause.text.index(lead)
            spans.append((start, start + len(lead), []))
    clauses = _join_lone_completions(clauses)
    for clause in clauses:
        _judge(clause, spans)
    quoted = {id(c): (c.start, c.start + len(c.text)) for c in clauses}
    for i, clause in enumerate(clauses):
        if clause.verdict is None:  # a bare mention takes the verdict of what follows (or precedes) it
            judge = next((c for c in clauses[i + 1:] if c.verdict is not None), None)
            if judge is None and i and not clauses[i - 1].refs:
                judge = clauses[i - 1]
            clause.verdict = bool(judge and judge.verdict)
            if judge is not None:
                quoted[id(clause)] = (min(clause.start, judge.start), max(*quoted[id(clause)], *quoted[id(judge)]))
    claims: dict[int, Claim] = {}  # by ordinal
    for clause in clauses:
        if not clause.verdict:
            continue
        start, end = quoted[id(clause)]
        evidence = message[start:end].strip(" ,;:.—–-")[:EVIDENCE_MAX]
        named = clause.refs
        if not named:
            matched = _title_match(clause.text, index)
            named = [] if matched is None else [(matched, MatchedBy.TITLE)]
        for ordinal, how in named:
            if ordinal in index.id_of and ordinal not in claims:
                claims[ordinal] = Claim(index.id_of[ordinal], how, evidence)
    return [claims[ordinal] for ordinal in sorted(claims)]


def applicable_claims(items: Sequence[OutlineItem], claims: Sequence[Claim]) -> list[Claim]:
    """The claims that may mark their item COMPLETED.

    An item is left alone when a caller set its status (UpdatePlanItem always wins), when it is
    already done or FAILED, or when any of its dependencies is not COMPLETED or SKIPPED — counting
    the items this same message completes ("steps 1-3 done" completes a chain).
    """
    by_id = {item.id: item for item in items}
    done = {item.id for item in items if item.status in DONE}
    waiting = [c for c in claims if by_id[c.item_id].status_source is not StatusSource.EXPLICIT
               and by_id[c.item_id].status in _OPEN]
    applied: list[Claim] = []
    progressed = True
    while progressed:
        progressed = False
        for claim in list(waiting):
            if all(dependency in done for dependency in by_id[claim.item_id].depends_on):
                done.add(claim.item_id)
                applied.append(claim)
                waiting.remove(claim)
                progressed = True
    order = {item.id: item.ordinal for item in items}
    return sorted(applied, key=lambda c: order[c.item_id])
