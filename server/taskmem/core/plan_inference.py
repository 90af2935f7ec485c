"""Plan progress from messages: which plan items a progress message says are finished.

Pure and deterministic (no I/O, no model). A wrong completion is the harmful error (an agent that
resumes skips unfinished work), so every rule that is unsure completes nothing. docs/api.md, "Plan progress from messages", says the same for users.

Clauses. The message is cut at sentence ends (". ", "!", "?", ";", newlines), at ": ", ", " and
spaced dashes, after a tick that follows a word ("venue ✓ catering ✓"), at "but"/"however"/
"though"; at "and"/"then"/"while" only when both sides name a step, or when each side is a finished
statement of its own. A clause that only names items ("Step 2 and step 3 done") takes the verdict of
the clause after it; one of completion or outcome words alone ("Contract: signed") is said of the
clause before it.

Stage A — is the clause a report that something is finished? (plan-independent grammar)

  | the clause has                                                              | verdict      |
  |-----------------------------------------------------------------------------|--------------|
  | a question mark, or opens with an auxiliary (is, did, has…) in a "?" sentence | not finished |
  | a negation (not, n't, never, no/without — "no errors" is fine)               | not finished |
  | failure or ongoing work (failing, blocked, stuck, corrupt, starting, running, | not finished |
  |   working on, retrying, waiting, skipping, an error code like x_denied…)     |              |
  | partial work: a count short of the whole (12 of 40, two of the three, 3/5,   | not finished |
  |   60% — not a measured result: 80% turnout), so far, the rest, to go, for    |              |
  |   today, some, most, only, almost, half, a part of a thing (the intro section)|              |
  | pending work (pending, awaiting, in review, on hold, pencilled, ready to, …) | not finished |
  | a condition anywhere (if, unless, provided, assuming)                        | not finished |
  | an intent or instruction before the cue (will, going to, need, next, once,   | not finished |
  |   when, until, make sure; "plan(ning)" only as a verb)                       |              |
  | otherwise a cue: a completion word (done, finished, ✓, passed…), a past tense| finished     |
  |   or participle (pushed, built), a result state of plan_outcomes (is live, is |              |
  |   in, went out, in place — a bare particle only with no noun after it: "is in |              |
  |   draft" is another state), or a veto word that is a step's own verb in a    |              |
  |   past form ("stopped" for "Stop the cron jobs"; that step only)             |              |
  | no cue                                                                      | not finished |

  A clause that qualifies the one before it takes back what that one finished ("Deployed, but not
  yet back in service", "Drafted, not sent", "…; the rest tonight", "…: 7/9") when it speaks of
  remaining or pending work, counts part of the whole, or opens with a contrast or negation and is
  itself not finished — unless it speaks of another item ("Built the image, but haven't pushed it
  yet"; a word that only modifies a noun of its own, "the guest's mic track", is no mention) and is
  not pending work on "it" ("Drafted, waiting for the manager to check it"). So does a clause not
  finished itself that gives a day or a time to come ("Port side done, starboard tomorrow", "sent off,
  results in about 2 weeks", "ready in 10 days"), unless the steps finished arrange what comes
  ("Laptops ordered, arriving Monday"); and what a bare id took from the clause it qualifies goes too
  ("Stability: … done, still waiting on …"). A side of "and" that opens with a past form shares the
  subject before it and is not cut off ("finished and shipped in the van").

Stage B — which step does a finished clause finish? (the first row that gives exactly one)

  | link (Claim.matched_by) | the clause                                                          |
  |-------------------------|---------------------------------------------------------------------|
  | step_number             | names it by number or ordinal ("step 2", "steps 1-3", "2/5", "the   |
  |                         |   last step", "the first two steps")                                |
  | item_id                 | names its id (with a digit or punctuation anywhere, "m2"; a plain-  |
  |                         |   word id only as the clause's first word and a noun of its own)    |
  | title                   | names it by its activity noun ("the rewiring", "the translation"),  |
  |                         |   or by the object of its title ("<verb> [particle] <object>        |
  |                         |   [<preposition> <complement>]": the object's head and at least half |
  |                         |   of its words, or a compound's first noun standing alone) AND says |
  |                         |   the title's outcome (a completion word, the title's verb in the   |
  |                         |   past, or its row of plan_outcomes.OUTCOME_TABLE); best coverage of|
  |                         |   the title wins, a tie links nothing                               |
  | outcome                 | says an outcome only one step's verb can have and names nothing but |
  |                         |   that title's words ("Signed!"); or, of the steps that can have it,|
  |                         |   names the head or complement of exactly one and no word of another|
  |                         |   title ("The council granted Mill Lane" for "Get a permit for Mill |
  |                         |   Lane"), its verb acting on no other thing ("Served the notice of  |
  |                         |   change on the other side" is not "Serve the bundle on …")         |
  | —                       | otherwise: nothing                                                   |

  At the title and outcome rows a clause that names a rival of the title's object links
  nothing to that title: another modifier before its head ("the staging database"; not a clipped
  title word, "resus" for "resuscitation"), another noun after it ("the welcome email template"),
  another number ("5 participants" for "Interview 8 participants"), another place or party after
  the title's preposition ("to staging" for "to production"), its head narrowed by a "for"/"of" of
  its own while a modifier of the title goes unsaid ("the risk assessment for Thursday's troop night"
  for "the camp risk assessment"), one of a plural object ("track 3 is mastered"), or a failure
  word that is no word of the object. A title "Get <thing> <participle>" ("Get the route
  approved") has the participle's outcomes; a title of two verbs ("Board and tank the walls")
  needs both said. The best title is refused when the clause names it only after a
  preposition, saying where, while it speaks first of another title's thing ("Privacy labels …
  published in App Store Connect" is not "Release the app to the store").

Not yet, per step (for every link). A finished clause does not finish a step when, for that step:
  - the step is a decision or a result given by others (get, obtain, secure, approve, pass, …) and
    the clause only hands the thing over (submitted, applied, lodged, sent) without the decision, or
    hands it over "for approval/review/sign-off" and the title does not say so itself;
  - the clause puts it in the calendar (booked, scheduled, arranged, planned) and the step does not
    book, order, hire or arrange ("Driver training booked" is no training);
  - a state is given a day to come ("out on Friday", "live next week") and the step is not a
    scheduling one, unless a past tense says when it was ("Released on Friday");
  - the step puts a thing in its place (install, fit, hang, plant, replace) and the clause names
    another place for it ("The boiler is in the van");
  - the clause's only past is work that comes before the step's outcome (drafted, prepared,
    submitted, …), with neither the step's verb, its outcome nor a completion word ("Skeleton is
    drafted" for "File the skeleton argument", even named by its id).

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
from taskmem.core.plan_outcomes import (ALL_OUTCOMES, IRREGULAR, NOT_COMPLETION, OUTCOME_WORDS, OUTCOMES, TABLE_VERBS,
                                        stem)
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
    OUTCOME = "outcome"


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
    if role not in INFERRING_ROLES or kind not in INFERRING_KINDS:
        return False
    words = _words(_normalise(content))
    return _has_cue(words) or any(_own_verb_past(w) for w in words)  # "stopped" finishes a stop step


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
    "finalised", "finalized",
})
_IRREGULAR_COMPLETION = frozenset(IRREGULAR) - NOT_COMPLETION
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
    "corrupt", "corrupted",
    "wrong", "incorrect", "redo", "redoing",
    "rollback",
    "almost", "nearly", "partially", "partly", "half", "halfway", "mostly",
    "start", "starts", "starting", "started", "begin", "begins", "beginning", "began", "begun", "working",
    "progress", "ongoing", "underway", "running", "still", "continuing", "resuming", "kicking", "kicked",
    "retry", "retrying", "retried", "retries", "trying", "tried", "attempting", "attempted",
    "skip", "skips", "skipping", "skipped", "waiting", "wait", "pending", "queued", "paused", "stopped",
    "cancelled", "canceled", "postponed", "deferred", "delayed", "stalled", "hanging", "hung",
})
_NEGATIONS = frozenset({"not", "never", "cannot", "no", "without", "nope", "neither", "nor"})
# Before the completion word, these make it a plan, a condition or a possibility.
_INTENT = frozenset({
    "will", "'ll", "ll", "going", "gonna", "about", "shall", "should", "must", "need", "needs", "requires",
    "depends", "want", "wants", "plan", "planning", "plans", "let's", "lets", "next", "then", "soon", "later",
    "tomorrow", "todo", "to-do", "if", "once", "when", "whenever", "until", "till", "unless", "before", "after",
    "can", "could", "may", "might", "would", "hope", "hopefully", "expect", "waiting",
    "ensure", "sure", "whether", "please", "remember",
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
_STEP_RUNS = re.compile(rf"\b(?P<end>first|last|final)\s+(?P<count>{_NUM})\s+(?:steps|items)\b")
_STEP_ORDINALS = re.compile(rf"\b(?P<ordinal>{_ORDINAL})\s+(?:steps?|items?)\b")
_ONE_NUMBER = re.compile(rf"(?P<a>{_NUM})(?:\s*/\s*\d{{1,3}})?(?:\s*(?:-|–|to|through|thru)\s*(?P<b>{_NUM}))?")

_ID_RUN = re.compile(r"[\w.-]+")
_CLAUSE_END = re.compile(r"[;!?\n]+|[.:,](?=\s|$)|\s[—–-]+\s|[—–]")
_TICK_THEN_WORD = re.compile(r"(?<=[\w)] ✓)[ \t]+(?=\w)|(?<=[\w)]✓)[ \t]+(?=\w)")
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
    words: list[str] = dataclasses.field(default_factory=list)  # its words, less the references


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
    for match in _STEP_RUNS.finditer(text):  # "the first two steps", "the last 3 items"
        n = min(_number(match.group("count")), count)
        run = range(n) if match.group("end") == "first" else range(count - n, count)
        spans.append((match.start(), match.end(), [(o, MatchedBy.STEP_NUMBER) for o in run]))
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
    titles: dict[int, _Title]  # ordinal → the title read as verb, object and words, for titles with content words
    postings: dict[str, list[int]]  # title stem → ordinals of the titles that have it
    objects: frozenset[str]  # every title's object words and verb
    verbs: frozenset[str]  # base forms that start a purpose ("to build the app"): the table's and the titles' verbs


@functools.lru_cache(maxsize=256)
def _plan_index(outline: tuple[tuple[str, int, str], ...]) -> _PlanIndex:
    ids: dict[str, int] = {}
    plain_ids: dict[str, int] = {}
    for item_id, ordinal, _ in outline:
        if _is_plain_word(item_id):
            plain_ids.setdefault(item_id.lower(), ordinal)
        elif not item_id.isdigit():
            ids.setdefault(item_id.lower(), ordinal)
    titles = {ordinal: read for _, ordinal, title in outline if (read := _read_title(title))}
    postings: dict[str, list[int]] = {}
    for ordinal, read in titles.items():
        for word in read.stems:
            postings.setdefault(word, []).append(ordinal)
    verbs = TABLE_VERBS | {_words(title.lower())[0] for _, _, title in outline if _words(title.lower())}
    return _PlanIndex(ids, plain_ids, {ordinal: item_id for item_id, ordinal, _ in outline}, titles, postings,
                      frozenset().union(*(t.object | {t.verb} for t in titles.values())), verbs)


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


def _says_of_something(text: str, question: bool = False) -> bool:
    """Whether words say of a thing that it is finished: a clause of its own, with a word that is no cue."""
    words = _words(text)
    return _finished(words, question, ALL_OUTCOMES) and any(w not in _STOP and not _is_completion(w) and w not in OUTCOME_WORDS
                                   and not _vetoed(w) for w in words)


def _shares_subject(text: str) -> bool:
    """ "… finished and shipped in the van": a side that opens with a past form has no subject of its own;
    it says more of the thing before "and"."""
    words = _words(text)
    return bool(words) and (_is_past(words[0]) or _is_completion(words[0]))


# A verb's noun: the rewiring, the translation, the deployment.
_ACTIVITY_NOUN = re.compile(r"[a-z]+(?:ing|ion|ions|ment)\b")


def _activity_refs(text: str, index: _PlanIndex) -> list[tuple[int, int, list[tuple[int, MatchedBy]]]]:
    """Spans of a step named by its activity: its verb as a noun ending in -ing, -ion or -ment
    ("rewiring", "the translation", "deployment" for "Deploy the api") of one title's verb only, standing
    as a noun of its own (no modifier before it that the title lacks, no noun after it: "the stereo
    mixing", "rewiring the garage" and "testing of the ui" speak of other work)."""
    spans = []
    for match in _ACTIVITY_NOUN.finditer(text):
        word = match.group()
        word_stem = stem(word)
        owners = [o for o, t in index.titles.items() if len(t.verb) >= 4 and word_stem.startswith(t.verb)]
        if len(owners) != 1 or word in _VETO or word in _INTENT:
            continue
        title = index.titles[owners[0]]
        # its neighbours within its clause ("Carrier confirmed our booking: 2x40ft…": nothing follows it)
        before = _words(_CLAUSE_END.split(text[:match.start()])[-1])[-1:]
        after = _words(_CLAUSE_END.split(text[match.end():])[0])[:4]
        if before and before[0] not in _STOP and stem(before[0]) not in title.stems and before[0] not in _GENERIC_MODIFIERS:
            continue
        if after and (after[0] == "of" or after[0] in _PREPOSITIONS):  # "the translation of the form": whose?
            thing = next((w for w in after[1:] if w not in _STOP), "")
            if stem(thing) not in title.object:
                continue
        elif after and not _stands_alone(after[0]):
            continue
        spans.append((match.start(), match.end(), [(owners[0], MatchedBy.TITLE)]))
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
    for match in _TICK_THEN_WORD.finditer(text):  # "venue ✓ catering ✓": each tick closes its own item
        cuts.append((match.start(), match.end(), False))
    cuts.sort()
    clauses = []
    begin = 0
    for end, resume, question in [*cuts, (len(text), len(text), False)]:
        refs = [ref for start, stop, span_refs in spans if begin <= start < end for ref in span_refs]
        named = [(start, stop) for start, stop, _ in spans if begin <= start < end]
        clauses.extend(_split_conjunctions(text, begin, end, named, refs, spans, question))
        begin = resume
    for clause in clauses:  # "Is the site live, or is it still on staging?": the question opens the sentence
        words = _words(clause.text)[:1]
        if words and words[0] in _AUXILIARIES:
            sentence_end = _SENTENCE_END.search(text, clause.start + len(clause.text))
            clause.question = clause.question or bool(sentence_end and sentence_end.group() == "?")
    return [c for c in clauses if c.text.strip()]


# A clause that opens with one of these asks, when its sentence ends with a question mark.
_AUXILIARIES = frozenset({"is", "are", "was", "were", "do", "does", "did", "has", "have", "had", "can", "could",
                          "will", "would", "should", "shall", "may", "might"})
_SENTENCE_END = re.compile(r"[.!?\n](?=\s|$)")


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
        elif m.group() == "and" and not any(s <= at < e for s, e in named) \
                and _says_of_something(text[begin:at]) and _says_of_something(text[at + 3:end], question) \
                and not _shares_subject(text[at + 3:end]):
            points.append(at)  # "IRB approval is in hand and the site visit is done": two statements
    bounds = [begin, *sorted(points), end]
    out = []
    for start, stop in zip(bounds, bounds[1:]):
        inner = [r for s, _, span_refs in spans if start <= s < stop for r in span_refs]
        out.append(_Clause(text[start:stop], start, inner, question))
    return out if points else [_Clause(piece, begin, refs, question)]


# A title's verb may take a particle ("set up", "back up", "roll out", "sign off", "shut down"), and
# its object ends at the first preposition ("Push image to registry": the object is the image).
_PARTICLES = frozenset({"up", "out", "off", "down", "over", "back"})
# Modifiers that do not make the title's object another thing ("the new billing service").
_GENERIC_MODIFIERS = frozenset({"new", "old", "latest", "final", "whole", "entire", "full", "current", "last"})
_PREPOSITIONS = frozenset({
    "to", "on", "in", "into", "onto", "for", "with", "from", "at", "by", "via", "across", "over", "under", "through",
    "about", "against", "between", "within", "per", "before", "after", "using",
})
# Titles that get an event ("Get IRB approval"): the event's own verb says it happened.
_GET_VERBS = frozenset({"get", "obtain", "secur", "receiv"})
# Prepositions before the party an object goes to ("to the client", "with the court").
_PARTY = frozenset({"to", "with"})
# A clause opening with one of these qualifies the clause before it ("done, but not yet back in service").
_CONTRAST = frozenset({"but", "however", "though", "although", "whereas", "yet", "except"})
# Partial or pending: with these a clause says the work is not (known to be) all done.
_PARTIAL = frozenset({
    "remaining", "remainder", "except", "excluding", "some", "most", "several", "few", "partial", "only",
    "awaiting", "await", "awaits", "tbd", "eta", "yet", "pencilled", "penciled", "provisionally", "tentatively",
})
_PARTIAL_PHRASES = frozenset({
    ("so", "far"), ("the", "rest"), ("to", "go"), ("on", "hold"), ("in", "review"), ("under", "review"),
    ("on", "its", "way"), ("on", "the", "way"), ("first", "batch"), ("first", "half"), ("first", "pass"),
    ("first", "round"), ("first", "part"), ("for", "today"), ("for", "now"), ("rolled", "back"), ("roll", "back"), ("ready", "to"),
    ("pushed", "back"), ("put", "back"), ("pushed", "out"),
})
# Anywhere in a clause after a finished one, these say its outcome is still to come.
_PENDING = frozenset({"pending", "awaiting", "await", "awaits", "waiting", "tbd", "yet", "still", "next", "holding"})
# A clause opening with one of these (or with a contrast) and not finished qualifies the clause before it.
_QUALIFYING = frozenset({
    "not", "never", "no", "still", "only", "yet", "pending", "awaiting", "partly", "partially", "mostly", "almost",
    "nearly", "half",
})
_REMAINDER_PHRASES = frozenset({("so", "far"), ("the", "rest"), ("to", "go"), ("remaining",), ("remainder",)})
_COUNT = re.compile(r"^(\d{1,6})/(\d{1,6})$")
# The phrases that start at a word, for finding any of them in one pass.
_PHRASES_AT: dict[str, list[tuple[str, ...]]] = {}
for _phrase in sorted(ALL_OUTCOMES | _PARTIAL_PHRASES | _REMAINDER_PHRASES):
    _PHRASES_AT.setdefault(_phrase[0], []).append(_phrase)


# --- verdicts ----------------------------------------------------------------------------------

def _is_past(word: str) -> bool:
    if word in _IRREGULAR_COMPLETION:
        return True
    if "_" in word:
        return False  # an identifier ("permission_denied"), not a verb
    last = word.rsplit("-", 1)[-1]  # "re-deployed" is past, "op-ed" is not
    return (len(last) >= 5 and word.endswith("ed") and not word.endswith("eed") and word not in _NEUTRAL_ED
            and word not in _VETO and not word.startswith("un"))


def _is_completion(word: str) -> bool:
    return word in _COMPLETION_WORDS or _is_past(word)


def _vetoed(word: str) -> bool:
    if word.endswith("n't") or word in ("dont", "didnt", "isnt", "wasnt", "hasnt", "havent", "cant", "wont", "arent"):
        return True
    percent = _PERCENT.match(word)
    if percent:
        return int(percent.group(1)) < 100
    if "_" in word:
        return any(_vetoed(part) for part in word.split("_"))  # "permission_denied", "build_failed"
    if word.startswith("un") and _is_completion(word[2:]):
        return True  # unfinished, untested, unmerged
    if _REWORK.match(word):
        return True  # re-inspecting, retesting: the work is being done again
    return word in _VETO


_REWORK = re.compile(r"re-?[a-z]{3,}ing$")


def _words(text: str) -> list[str]:
    words = []
    for token in _TOKEN.findall(text):
        if token == "%" and words and words[-1].isdigit():
            words[-1] += "%"
        else:
            words.append(token)
    return words


def _phrase_words(words: list[str]) -> list[str]:
    """The words outcomes are looked up in: "the site's live" reads "the site is live"."""
    out = []
    for word in words:
        if word.endswith("'s"):
            out.extend((word[:-2], "is"))
        else:
            out.append(word)
    return out


def _find_phrases(words: list[str], phrases: frozenset[tuple[str, ...]]) -> dict[tuple[str, ...], int]:
    """Each phrase of the set that occurs in the words, with the index of its first occurrence."""
    found: dict[tuple[str, ...], int] = {}
    for i in range(len(words)):
        for phrase in _PHRASES_AT.get(words[i], ()):
            if phrase in phrases and phrase not in found and _phrase_at(words, i, phrase):
                found[phrase] = i
    return found


# Words a phrase may hold without changing it: "are all in" is "are in", "is finally live" is "is live".
_PHRASE_FILLER = frozenset({"all", "already", "finally", "fully", "both"})


def _phrase_at(words: list[str], i: int, phrase: tuple[str, ...]) -> bool:
    j = i
    for k, want in enumerate(phrase):
        while k and j < len(words) and words[j] in _PHRASE_FILLER and want not in _PHRASE_FILLER:
            j += 1
        if j >= len(words) or words[j] != want:
            return False
        j += 1
    return not _state_takes_noun(words, j, phrase)


# A state said with a bare particle ("the boiler is in", "the site is up") says the thing is there only
# when no noun follows: "is in draft", "is out sick", "is up for review" are other states.
_STATE_VERBS = frozenset({"is", "are", "now", "went", "gone"})
_STATE_PARTICLES = frozenset({"in", "up", "out", "back", "over", "off", "down"})  # "is on Node 22" names a version
_DETERMINERS = frozenset({"the", "a", "an", "our", "my", "your", "their", "his", "her", "its", "this", "that"})
_AFTER_STATE = frozenset({"and", "too", "now", "today", "yesterday", "tonight", "already", "again", "as", "so", "both",
                          "all", "✓", "finally", "officially", "at", "last", "early", "this", "earlier"})


def _state_takes_noun(words: list[str], j: int, phrase: tuple[str, ...]) -> bool:
    if phrase[0] not in _STATE_VERBS or phrase[-1] not in _STATE_PARTICLES or j >= len(words):
        return False
    after = words[j]
    return not (after in _PREPOSITIONS or after in _AFTER_STATE or after in _DETERMINERS or _is_completion(after)
                or after in OUTCOME_WORDS)


def _phrases_in(words: list[str]) -> frozenset[tuple[str, ...]]:
    return frozenset(_find_phrases(_phrase_words(words), ALL_OUTCOMES))


def _first_cue(words: list[str], outcomes: frozenset[tuple[str, ...]] = ALL_OUTCOMES) -> int | None:
    """Where the clause first says something happened: a completion word, a past tense or one of the outcomes."""
    at = [i for i, w in enumerate(words) if _is_completion(w)][:1]
    expanded = _phrase_words(words)
    if len(expanded) == len(words):  # outcome positions line up with the words
        at.extend(_find_phrases(expanded, outcomes).values())
    elif _find_phrases(expanded, outcomes):
        at.append(next(i for i, w in enumerate(words) if w.endswith("'s")))
    return min(at) if at else None


def _has_cue(words: list[str]) -> bool:
    return _first_cue(words) is not None


def _partial_count(words: list[str]) -> bool:
    """ "12 of 40", "3 out of 5", "7/9", "two of three": a count short of the whole."""
    def number(word: str) -> int | None:
        return int(word) if word.isdigit() else _NUMBER_WORDS.get(word)
    for i, word in enumerate(words):
        count = _COUNT.match(word)
        if count and int(count.group(1)) < int(count.group(2)):
            return True
        a = number(word)
        if a is None:
            continue
        rest = [w for w in words[i + 1:i + 5] if w not in _DETERMINERS]  # "two of the three"
        total = rest[1] if rest[:1] == ["of"] and len(rest) > 1 else rest[2] if rest[:2] == ["out", "of"] and len(rest) > 2 else None
        b = number(total) if total else None
        if b is not None and a < b:
            return True
    return False


def _remainder(words: list[str]) -> bool:
    return bool(_find_phrases(words, _REMAINDER_PHRASES))


# "<part> of <the step's object>" is a part of it, not all of it (unless the part is the title's own word).
_PART = frozenset({
    "section", "sections", "chapter", "chapters", "part", "parts", "half", "intro", "introduction", "portion",
    "piece", "pieces", "page", "pages", "chunk", "chunks", "subset", "sample", "batch", "slice", "outline", "draft",
})
_FAILURE = frozenset({
    "fail", "fails", "failed", "failing", "failure", "failures", "error", "errors", "errored", "broken", "crash",
    "crashed", "crashes", "crashing", "timeout", "exception", "flaky", "wrong", "incorrect", "corrupt", "corrupted",
})


def _excusable(word: str, objects: frozenset[str]) -> bool:
    """A failure word that names what a step acts on ("Reproduce the crash") is no veto, nor one that is a
    step's own verb ("Drywall is hung" for "Hang the drywall", "Stopped the old workers" for "Stop the old
    workers": title matching then accepts only that step); a negation always is."""
    return (word in _FAILURE or word in _PART or _own_verb_past(word)) and stem(word) in objects


def _own_verb_past(word: str) -> bool:
    """A veto in a past form ("stopped", "skipped", "hung"; not "running" or "not"): a step whose verb it is
    was done."""
    return word in _VETO and word not in _NEGATIONS and (word.endswith("ed") or word in IRREGULAR)


def _measure(words: list[str], i: int) -> bool:
    """Whether a percentage is a measurement (followed by the noun it measures: "70% turnout", "31% open
    rate") rather than a share of the work ("60%", "60% done", "60% of the rows", "60% migrated")."""
    after = words[i + 1] if i + 1 < len(words) else ""
    return bool(_PERCENT.match(words[i])) and after.isalpha() and after not in _STOP \
        and after not in _PREPOSITIONS and not _is_completion(after) and after not in OUTCOME_WORDS \
        and not _vetoed(after) and after not in _PARTIAL and after not in ("through", "there", "way")


def _vetoes(words: list[str]) -> list[str]:
    """The words that say the work is not (known to be) finished: negation, failure, ongoing work, a
    part of something ("the intro section of the report").

    "no errors" and a measured result ("70% turnout") are no vetoes.
    """
    found = []
    for i, word in enumerate(words):
        if word in _NO and i + 1 < len(words) and words[i + 1] in _HARMLESS_AFTER_NO:
            continue  # "without errors", "no issues"
        if word in _HARMLESS_AFTER_NO and i and words[i - 1] in _NO:
            continue
        if _measure(words, i):
            continue  # "a 70% turnout", "31% open rate": a figure about the result, not the work's share
        if word in _PART and words[i + 1:i + 2] == ["of"] or _vetoed(word):
            found.append(word)
    return found


def _unfinished(words: list[str], objects: frozenset[str] = frozenset()) -> bool:
    """A veto anywhere, or partial or pending work.

    Failure words whose stem is in objects (the objects of the plan's titles) are left to title matching.
    """
    if _partial_count(words) or any(w in _PARTIAL for w in words) or _find_phrases(words, _PARTIAL_PHRASES):
        return True
    return any(not _excusable(word, objects) for word in _vetoes(words))


def _finished(words: list[str], question: bool, outcomes: frozenset[tuple[str, ...]],
              objects: frozenset[str] = frozenset()) -> bool:
    if question:
        return False
    first = _first_cue(words, outcomes)
    if first is None:  # a step's own verb that is a veto elsewhere ("stopped" for "Stop the cron jobs")
        first = next((i for i, w in enumerate(words) if _own_verb_past(w) and stem(w) in objects), None)
    if first is None or _unfinished(words, objects) or any(w in _CONDITION for w in words):
        return False
    return not any(_intends(words, i) for i in range(first))


# Anywhere in a clause, a condition makes what it says not (yet) true: "The room is ours if we confirm by noon".
_CONDITION = frozenset({"if", "unless", "provided", "providing", "assuming"})


# Intent words that are nouns too: "the seating plan" is a thing, "we plan to" and "plan to ship" intend.
_NOUN_TOO = frozenset({"plan", "plans", "planning"})
_SUBJECTS = frozenset({"i", "we", "you", "they", "he", "she", "team"})


def _intends(words: list[str], i: int) -> bool:
    word = words[i]
    if word in _NOUN_TOO:
        return words[i + 1:i + 2] == ["to"] or (i > 0 and words[i - 1] in _SUBJECTS)
    return word in _INTENT or word.endswith("'ll")


def _outcomes_of(refs: list[tuple[int, MatchedBy]], index: _PlanIndex) -> frozenset[tuple[str, ...]]:
    """The outcomes that say the named items happened ("Step 3 scheduled" finishes "Schedule the
    review", not "Deploy the app")."""
    return frozenset().union(*(index.titles[o].outcomes for o, _ in refs if o in index.titles))


def _judge(clause: _Clause, spans: list[tuple[int, int, list[tuple[int, MatchedBy]]]], index: _PlanIndex) -> None:
    """Set clause.verdict: True/False, or None when it only names items.

    A clause that names items is read with their outcomes; one that names none with every outcome
    (title matching then asks for the matched title's own), and it may hold a failure word that is
    a title's object ("Reproduced the crash"): title matching accepts only an item whose object it is.
    """
    text = list(clause.text)
    for start, end, _ in spans:  # blank out the reference spans: "step two" says nothing about finishing
        for i in range(max(start, clause.start), min(end, clause.start + len(text))):
            text[i - clause.start] = " "
    clause.words = words = _words("".join(text))
    if clause.refs and all(w in _BARE_FILLER for w in words):
        clause.verdict = None
    elif clause.refs:
        verbs = frozenset(index.titles[o].verb for o, _ in clause.refs if o in index.titles)  # "hung" for a hang step
        clause.verdict = _finished(words, clause.question, _outcomes_of(clause.refs, index), verbs)
    else:
        clause.verdict = _finished(words, clause.question, ALL_OUTCOMES, index.objects)


# --- titles ------------------------------------------------------------------------------------

def content_stems(text: str) -> frozenset[str]:
    return frozenset(stem(w.removesuffix("'s")) for w in _words(text.lower()) if w not in _STOP and w not in ("✓", "%", "#"))


class _Title(NamedTuple):
    """A title read as "<verb> [particle] <object> [<preposition> <complement>]"."""

    stems: frozenset[str]  # every content word
    verb: str  # the first word's stem: plan steps are written as commands
    object: frozenset[str]  # what the verb acts on; the complement when the verb takes none ("SSH into server")
    complements: tuple[tuple[str, frozenset[str]], ...]  # (preposition, its words): "to production"
    numbers: dict[str, str]  # a number's neighbouring word → the number ("Interview 8 participants")
    head: frozenset[str]  # the object's last word (and the one before a number: "migration 42"): named, or no match
    modifiers: frozenset[str]  # the object's other words ("production" in "the production database")
    outcomes: frozenset[tuple[str, ...]]  # what saying the verb's outcome happened looks like
    plural: bool  # the object's last word is plural ("the tracks"): one of them named alone is a part
    also: str  # a second verb joined to the first ("Board and tank the walls"): its outcome is needed too


def _read_title(title: str) -> _Title | None:
    words = [w for w in _words(title.lower()) if w not in ("✓", "%", "#")]
    stems = content_stems(title)
    if not words or not stems:
        return None
    verb = stem(words[0])
    rest = words[2:] if len(words) > 1 and words[1] in _PARTICLES else words[1:]
    also = ""
    if len(rest) > 2 and rest[0] == "and":  # "Board and tank the shower walls": two things to do to one object
        also, rest = stem(rest[1]), rest[2:]
    cut = next((i for i, w in enumerate(rest) if w in _PREPOSITIONS), len(rest))
    phrase = [w for w in rest[:cut] if w not in _STOP]
    complements = []
    if phrase:  # "to production" in "Deploy the api to production"
        complements = [(w, stems_after) for i, w in enumerate(rest) if w in _PREPOSITIONS
                       if (stems_after := content_stems(" ".join(_phrase_after(rest, i))))]
    else:  # "SSH into server": the complement is what the verb acts on
        phrase = [w for w in rest[cut:] if w not in _STOP]
    caused: frozenset[tuple[str, ...]] = frozenset()
    if verb in _GET_VERBS and len(phrase) > 1 and _is_past(phrase[-1]):  # "Get the route approved": a result
        caused = OUTCOMES.get(stem(phrase[-1]), frozenset()) | {(phrase[-1],)}
        phrase = phrase[:-1]
    head = {stem(w) for w in phrase[-2:] if any(c.isdigit() for c in phrase[-1])} | {stem(w) for w in phrase[-1:]}
    obj = content_stems(" ".join(phrase))
    events: frozenset[tuple[str, ...]] = frozenset()
    if verb in _GET_VERBS:  # "Get IRB approval": the outcomes of the verb its event noun comes from
        events = events.union(*(o for v, o in OUTCOMES.items() if len(v) >= 4 and any(h.startswith(v) for h in head)))
    return _Title(stems, verb, obj, tuple(complements), _numbered_nouns(words), frozenset(head), obj - head,
                  OUTCOMES.get(verb, frozenset()) | events | caused, bool(phrase) and _is_plural(phrase[-1]), also)


def _is_plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) and stem(word) != word


def _phrase_after(words: list[str], i: int) -> list[str]:
    """The words after the preposition at i, up to the next preposition."""
    end = next((j for j in range(i + 1, len(words)) if words[j] in _PREPOSITIONS), len(words))
    return words[i + 1:end]


def _numbered_nouns(words: list[str]) -> dict[str, str]:
    """The stem of each word next to a number → the number: "8 participants", "python 3.12"."""
    numbered = {}
    for i, word in enumerate(words):
        if any(c.isdigit() for c in word) or word in _NUMBER_WORDS:
            value = str(_NUMBER_WORDS[word]) if word in _NUMBER_WORDS else word
            for neighbour in (words[i - 1] if i else "", words[i + 1] if i + 1 < len(words) else ""):
                if neighbour and neighbour not in _STOP and not any(c.isdigit() for c in neighbour):
                    numbered.setdefault(stem(neighbour), value)
    return numbered


class _Said(NamedTuple):
    """What title matching reads of a clause."""

    words: list[str]
    stems: frozenset[str]  # content words before any purpose "to <verb>"
    named: frozenset[str]  # of those, what the clause acts on: not its own verbs or outcome words
    verbs: frozenset[str]  # stems of its past tenses
    outcomes: frozenset[tuple[str, ...]]  # outcome phrases in it
    excused: list[str]  # stems of the vetoes _judge let through as a title's words
    numbers: dict[str, str]  # numbered words


def _read_clause(clause_text: str, verbs: frozenset[str]) -> _Said:
    words = _words(re.sub(r"[()\[\]{}\"“”]", " and ", clause_text))  # an aside is not a noun phrase's next word
    purpose = next((i for i in range(len(words) - 1) if words[i] == "to" and words[i + 1] in verbs), len(words))
    # a compound's parts name things too ("the related-work survey" is about related work)
    stems = content_stems(" ".join(p for w in words[:purpose] for p in ([w, *w.split("-")] if "-" in w else [w])))
    past = frozenset(stem(w) for w in words if _is_past(w) or _own_verb_past(w))
    outcomes = _phrases_in(words)
    named = stems - past - {stem(w) for phrase in outcomes for w in phrase}
    return _Said(words, stems, named, past, outcomes, [stem(w) for w in _vetoes(words)],
                 _numbered_nouns(words))


def _about_something_else(title: _Title, said: _Said) -> bool:
    """Whether the clause speaks of something other than the title's object, though it shares words with it.

    It does unless it names the object's head and at least half of its words, and when it names a
    rival of the object (_rival_named).
    """
    if title.object and (len(title.object & said.named) * 2 < len(title.object) or title.head.isdisjoint(said.named)):
        return True
    return _rival_named(title, said)


def _rival_named(title: _Title, said: _Said) -> bool:
    """Whether the clause names a rival of the title's object: a veto let through that is no word of the
    object (nor a part word the title's verb); another number beside one of the title's words ("5
    participants" for "8 participants"; "16.4" is "16"); another place or party after the title's
    preposition; one of a plural object; or the head only as a part of another thing (_modified_away)."""
    if not all(word in title.object or word == title.verb for word in said.excused):
        return True
    for noun, number in title.numbers.items():
        other = said.numbers.get(noun, number)
        if other != number and not other.startswith(number + "."):
            return True
    for preposition, complement in title.complements:
        # a party the title sends or files its object to or with is also named by "to": "to the partner"
        # is another party than "with the court"
        alike = _PARTY if preposition in _PARTY else {preposition}
        places = [content_stems(" ".join(_phrase_after(said.words, i))) for i, w in enumerate(said.words)
                  if w in alike]
        if places and all(place and place.isdisjoint(complement) for place in places):
            return True  # "to staging" for "to production", "to my co-author" for "to the foundation"
    words = said.words
    mentions = [i for i, w in enumerate(words) if stem(w.removesuffix("'s")) in title.head]
    if mentions and title.plural and all(_one_of_them(words, i) for i in mentions):
        return True  # "track 3 is mastered", "a nurse hired" for "Master the tracks", "Hire two nurses"
    if mentions and title.modifiers - said.stems and all(_narrowed_otherwise(title, words, i) for i in mentions):
        return True  # "the risk assessment for Thursday's troop night" is not "the camp risk assessment"
    return bool(mentions) and all(_modified_away(title, said, i) for i in mentions)


def _narrowed_otherwise(title: _Title, words: list[str], i: int) -> bool:
    """Whether the head at i is narrowed by a "for …" or "of …" of its own that the title does not say."""
    if i + 1 >= len(words) or words[i + 1] not in ("for", "of"):
        return False
    narrowing = content_stems(" ".join(_phrase_after(words, i + 1)))
    return bool(narrowing) and narrowing.isdisjoint(title.stems)


def _one_of_them(words: list[str], i: int) -> bool:
    """Whether a singular mention of a plural object's head stands for one of them: it heads its own
    noun ("track 3", "nurse hired"), not modifies the next ("the user survey" for "Survey the users")."""
    word = words[i].removesuffix("'s")
    after = words[i + 1] if i + 1 < len(words) else ""
    return not _is_plural(word) and (any(c.isdigit() for c in after) or _stands_alone(after) or after in _PREPOSITIONS)


def _abbreviates(word: str, stems: frozenset[str]) -> bool:
    """Whether a word is one of the title's words or its clipped form ("resus" for "resuscitation")."""
    return word in stems or len(word) >= 4 and any(s.startswith(word) for s in stems)


def _modified_away(title: _Title, said: _Said, i: int) -> bool:
    """Whether this mention of the title's head belongs to another thing: a modifier before it that
    the title lacks ("the staging database" for "the production database"; "the staging workers"
    for "the workers": a part of them), or a noun of its own after it ("the welcome email template")."""
    words = said.words
    before = words[i - 1] if i else ""
    if before and before not in _STOP and before not in _GENERIC_MODIFIERS and not any(c.isdigit() for c in before) \
            and not _is_completion(before) and before not in OUTCOME_WORDS and not _vetoed(before) \
            and not _abbreviates(stem(before.removesuffix("'s")), title.stems):
        return True
    after = words[i + 1] if i + 1 < len(words) and not words[i].endswith("'s") else ""
    return bool(after) and after not in _STOP and after not in _PREPOSITIONS and after not in OUTCOME_WORDS \
        and not any(c.isdigit() for c in after) and not after.endswith("ly") and not _is_completion(after) \
        and not _vetoed(after) and stem(after) not in title.stems and not stem(after).startswith(title.verb)


def _names_of(title: _Title, said: _Said, own: bool) -> _Said:
    """The clause with the compound's first noun standing alone counted as naming the title's object,
    when the title's own outcome is said ("the keynotes confirmed" for "Confirm the keynote speakers":
    no other noun follows it)."""
    named = set(said.named)
    if own and title.head.isdisjoint(named) and not any(c.isdigit() for h in title.head for c in h):
        words = said.words
        shortened = [i for i, w in enumerate(words) if stem(w) in title.modifiers and stem(w) in named]
        if shortened and all((i + 1 == len(words) or _stands_alone(words[i + 1]) or words[i + 1] in _PREPOSITIONS)
                             and not _after_preposition(words, i) for i in shortened):
            named |= title.head
    if named == said.named:
        return said
    return said._replace(named=frozenset(named), stems=said.stems | frozenset(named))


def _after_preposition(words: list[str], i: int) -> bool:
    """Whether the noun at i is a preposition's ("about the renewal"): a topic, not what was acted on."""
    j = i - 1
    while j >= 0 and words[j] in _STOP and words[j] not in _PREPOSITIONS:
        j -= 1
    return j >= 0 and (words[j] in _PREPOSITIONS or words[j] == "of")


def _title_match(clause_text: str, index: _PlanIndex) -> int | None:
    """The one item the clause says is finished in the item's own terms, if there is one.

    The clause must be about the title's object (_about_something_else) and say the outcome
    happened: a completion word, the title's verb in the past tense, or an outcome listed for that
    verb (OUTCOME_TABLE). Among the items that pass, the one whose title it covers best (at least
    half of the title's words and two, the verb counting as covered by its outcome); a tie is none.
    """
    said = _read_clause(clause_text, index.verbs)
    generic = any(w in _COMPLETION_WORDS for w in said.words)
    candidates: set[int] = set()  # only titles that share a word with the clause are looked at
    for word in said.stems:
        candidates.update(index.postings.get(word, ()))
    scored = []
    for ordinal in candidates:
        title = index.titles[ordinal]
        own = _says_outcome(title, said)
        read = _names_of(title, said, own)
        if _about_something_else(title, read):
            continue
        if not (generic or own):
            continue
        overlap = len(title.stems & (read.stems | {title.verb} if own else read.stems))
        if overlap >= min(2, len(title.stems)) and overlap * 2 >= len(title.stems):
            scored.append((overlap / len(title.stems), overlap, ordinal))
    if not scored:
        return None
    scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
    if len(scored) > 1 and scored[1][:2] == scored[0][:2]:
        return None  # two items fit equally well: say nothing rather than guess
    if _named_only_as_a_place(scored[0][2], said, index):
        return None
    return scored[0][2]


def _named_only_as_a_place(ordinal: int, said: _Said, index: _PlanIndex) -> bool:
    """ "Privacy labels completed & published in App Store Connect" for "Release the app to the store": the
    title's thing is named only after a preposition, where the clause says where, while what the clause is
    about (before it) is another title's thing."""
    cut = next((i for i, w in enumerate(said.words) if w in _PREPOSITIONS), len(said.words))
    before = {stem(w.removesuffix("'s")) for w in said.words[:cut]}
    return before.isdisjoint(index.titles[ordinal].head) \
        and any(o != ordinal and t.head and t.head <= before for o, t in index.titles.items())


# --- links that need no title words (stage B) -----------------------------------------------

def _link(clause: _Clause, index: _PlanIndex) -> list[tuple[int, MatchedBy]]:
    """The item a finished clause that names none is about: by its title's words, else by the outcome
    only one step of the plan can have."""
    matched = _title_match(clause.text, index)
    if matched is not None:
        return [(matched, MatchedBy.TITLE)]
    said = _read_clause(clause.text, index.verbs)
    owners = [o for o, t in index.titles.items() if _says_outcome(t, said) and not _rival_named(t, said)]
    matched = _outcome_match(said, owners, index)
    if matched is not None:
        return [(matched, MatchedBy.OUTCOME)]
    return []


# Work that comes before a step's outcome: a clause whose only past is one of these does not finish a
# step of another verb ("Skeleton is drafted" is not "File the skeleton argument").
_PRECURSORS = frozenset(stem(v) for v in (
    "draft prepare plan schedule book order submit lodge apply request start begin pack quote estimate propose"
    " sketch outline").split())


def _says_outcome(title: _Title, said: _Said) -> bool:
    """Whether the clause says this step's own outcome happened: its verb in a past form, or an outcome
    of the verb's row of the table (or of the event a get-step asks for: "granted" for "Get the permit");
    for a title of two verbs, the second verb too ("boarded" alone does not board and tank the walls)."""
    first = title.verb in said.verbs or not title.outcomes.isdisjoint(said.outcomes)
    return first and (not title.also or title.also in said.verbs)


def _identifying(title: _Title) -> frozenset[str]:
    """The title's words that say which thing it is about: the object's head, and the places and parties
    after its prepositions (a modifier alone may modify another thing: "the search dashboard" for "the
    search service")."""
    return title.head.union(*(words for _, words in title.complements))


def _outcome_match(said: _Said, owners: list[int], index: _PlanIndex) -> int | None:
    """The step whose outcome the clause says when the outcome itself picks it: the one step of the plan
    that can have that outcome, the clause naming nothing but its title's words ("We've exchanged" for
    "Exchange contracts"); or, of the steps that can, the one whose title shares a word with the clause,
    the clause naming no word of another title ("Customs released the goods" for "Get customs clearance",
    not "Issue the bill of lading")."""
    said = said._replace(named=frozenset(w for w in said.named if _a_thing(w)))
    if len(owners) == 1 and said.named <= index.titles[owners[0]].stems:
        return owners[0]
    sharing = [o for o in owners if not said.named.isdisjoint(_identifying(index.titles[o]))]
    if len(sharing) != 1:
        return None
    title = index.titles[sharing[0]]
    others = frozenset().union(*(t.stems for t in index.titles.values() if t is not title)) - title.stems
    if not said.named.isdisjoint(others) or _acts_on_another_thing(title, said):
        return None
    return sharing[0]


def _acts_on_another_thing(title: _Title, said: _Said) -> bool:
    """ "Served the notice of change on the other side" for "Serve the bundle on the other side": what the
    clause's verb acts on (the words after it, up to a preposition) is no word of the title."""
    at = next((i for i, w in enumerate(said.words) if stem(w) in said.verbs), None)
    if at is None:
        return False
    # a short acronym may stand for the title's words ("the RA" for the risk assessment)
    after = [w for w in _phrase_after(said.words, at) if w not in _PARTICLES]  # "signed off the RA"
    acted_on = frozenset(w for w in content_stems(" ".join(after)) if len(w) > 2)
    return bool(acted_on) and acted_on.isdisjoint(title.stems) and not acted_on <= _TIME_WORDS


# Words that name no thing the work was done to: when it was, and who said so.
_TIME_WORDS = frozenset(stem(w) for w in (
    "today tonight yesterday morning afternoon evening night week weekend month day hour minute earlier finally"
    " mon tue tues wed thu thur thurs fri sat sun monday tuesday wednesday thursday friday saturday sunday"
    " january february march april may june july august september october november december"
    " jan feb mar apr jun jul aug sep sept oct nov dec").split())


def _a_thing(stemmed: str) -> bool:
    """Whether a word the clause names can be what the work was done to (not a time, a number, a pronoun
    contracted with its verb, or a completion word's noun)."""
    return stemmed not in _TIME_WORDS and not any(c.isdigit() for c in stemmed) and "'" not in stemmed \
        and stem(stemmed) not in _COMPLETION_STEMS


_COMPLETION_STEMS = frozenset(stem(w) for w in _COMPLETION_WORDS | {"completion"})


# --- the whole message -------------------------------------------------------------------------

def _join_lone_completions(clauses: list[_Clause]) -> list[_Clause]:
    """ "Screenshots of the dashboard: done", "The vendor contract: signed": a clause of completion
    or outcome words alone that names nothing is said of the clause before it."""
    joined: list[_Clause] = []
    for clause in clauses:
        words = _words(clause.text)
        previous = joined[-1] if joined else None
        if previous is not None and not clause.refs and not previous.question and words \
                and all(_is_completion(w) or w in _STOP or w in OUTCOME_WORDS for w in words) and _has_cue(words):
            gap = clause.start - (previous.start + len(previous.text))
            previous.text += " " * gap + clause.text
            previous.question = clause.question
        else:
            joined.append(clause)
    return joined


def _stands_alone(after: str) -> bool:
    """Whether a word followed by this one is a noun of its own ("venue ✓", "changelog done") rather
    than a modifier of the noun after it ("hearing request submitted" is about a request)."""
    return not after or after in _BARE_FILLER or after == "✓" or after in _CONTRAST or after in OUTCOME_WORDS \
        or _is_completion(after) or _vetoed(after) or after in _INTENT - _NOUN_TOO or after in _PARTIAL


def _normalise(message: str) -> str:
    """Lower case and one check mark, keeping every offset so evidence can quote the original."""
    text = message.lower()
    if len(text) != len(message):  # a rare character whose lower case is longer ("İ"): keep it as it is
        text = "".join(c.lower() if len(c.lower()) == 1 else c for c in message)
    text = text.replace("[x]", "✓  ").replace("\u2019", "'").replace("\ufe0f", " ")
    return re.sub(r"[✔✅☑]", "✓", text)


def _about_other_items(clause: _Clause, claimed: set[int], index: _PlanIndex) -> bool:
    """Whether a qualifying clause speaks of other items: names one, or holds another item's verb or object
    (not one that only modifies a noun of the clause's own: "the guest's mic track is corrupt" is about
    the track)."""
    if any(ordinal not in claimed for ordinal, _ in clause.refs):
        return True
    words = _words(clause.text)
    # the qualifying words themselves name nothing ("not" is also the stem of "notes")
    said = frozenset(stem(w) for i, w in enumerate(words) if w not in _STOP and not _modifier_at(words, i)
                     and w not in _NEGATIONS and w not in _CONTRAST and w not in _PENDING)
    return any(ordinal not in claimed and not said.isdisjoint(title.object | {title.verb})
               for ordinal, title in index.titles.items())


_BACK_REFERENCES = frozenset({"it", "them", "this", "these"})


def _pending_on_it(clause: _Clause, claimed: set[int], index: _PlanIndex) -> bool:
    """ "Drafted, waiting for the head to review it": pending work on "it" is the finished clause's thing,
    though another item's word is said (not when another item's verb is: "but haven't pushed it yet")."""
    words = _words(clause.text)
    verbs = {stem(w) for w in words}
    return any(w in _PENDING for w in words) and not _BACK_REFERENCES.isdisjoint(words) \
        and not any(o not in claimed and t.verb in verbs for o, t in index.titles.items())


def _modifier_at(words: list[str], i: int) -> bool:
    """Whether the word at i modifies the noun after it: a possessive, or a word before a noun of its own."""
    after = words[i + 1] if i + 1 < len(words) else ""
    return words[i].endswith("'s") or not _stands_alone(after) and after not in _PREPOSITIONS \
        and not any(c.isdigit() for c in after) and after.isalpha()


def _qualifies_previous(clause: _Clause) -> bool:
    """ "…, but not yet back in service", "…, not sent", "…; the rest tonight", "…: 7/9": the clause
    takes back what the one before it said was finished. One that speaks of work remaining or
    pending, or counts part of the whole, does; so does one
    that is itself not finished and opens with a contrast (but, though, except, …) or with the
    negation, pending or partial word that qualifies (not, still, only, …)."""
    words = _words(clause.text)
    if any(_REWORK.match(w) for w in words):  # "…, re-inspecting with eddy current": it did not hold
        return True
    if _remainder(words) or _partial_count(words) or any(
            w in _PENDING or _PERCENT.match(w) and _vetoed(w) and not _measure(words, i) for i, w in enumerate(words)):
        return True
    opens = bool(words) and (words[0] in _CONTRAST or words[0] in _QUALIFYING or words[0].endswith("n't"))
    return opens and _unfinished(words)


def _puts_off(clause: _Clause, claimed: set[int], index: _PlanIndex) -> bool:
    """ "Antifoul: port side done, starboard tomorrow", "Walls boarded, tanking goes on Saturday", "Sent off,
    results in about 2 weeks": a clause not finished itself that gives a day or a time to come puts part of
    the work (or its result) off, unless the steps finished are
    ones that arrange what comes ("Laptops ordered, arriving Monday")."""
    words = _words(clause.text)
    later = not clause.verdict and not _LATER.isdisjoint(words)
    # "ready in 10 days" is to come; "finished in 2 days" says how long it took
    later = later or _time_to_come(words) and not (clause.verdict and any(_is_past(w) for w in words))
    return later and not all(o in index.titles and index.titles[o].verb in _SCHEDULING for o in claimed)


_SPANS = frozenset({"min", "mins", "minute", "minutes", "hour", "hours", "hr", "hrs", "day", "days", "week", "weeks",
                    "wk", "wks", "month", "months", "fortnight", "fortnights"})
_SPAN_FILLER = frozenset({"about", "around", "roughly", "approx", "a", "an", "another", "the", "next", "couple", "few",
                          "of", "or", "so"})


def _time_to_come(words: list[str]) -> bool:
    """ "in about 2 weeks", "in 10 days", "in a couple of hours": a span of time from now."""
    for i, word in enumerate(words):
        if word == "in":
            for after in words[i + 1:i + 5]:
                if after in _SPANS:
                    return True
                if not (after in _SPAN_FILLER or after in _NUMBER_WORDS or after.replace(".", "").isdigit()):
                    break
    return False


class _Reading(NamedTuple):
    """A message cut into judged clauses (stage A), ready for linking (stage B)."""

    text: str
    index: _PlanIndex
    clauses: list[_Clause]
    quoted: dict[int, tuple[int, int]]  # id(clause) → the span its evidence quotes
    judged: dict[int, int]  # a bare mention's position → the position of the clause whose verdict it took


def _read_message(items: Sequence[OutlineItem], message: str) -> _Reading:
    text = _normalise(message)
    index = _plan_index(tuple(map(_INDEX_KEY, items)))
    plain_ids = index.plain_ids
    spans = _numbered_refs(text, len(items)) + _id_refs(text, index) + _activity_refs(text, index)
    clauses = _cut(text, spans)
    for clause in clauses:
        first = _words(clause.text)[:3]
        at = 1 if first and first[0] == "✓" else 0
        lead = first[at] if len(first) > at else ""
        if lead in plain_ids and _stands_alone(first[at + 1] if len(first) > at + 1 else ""):
            clause.refs.append((plain_ids[lead], MatchedBy.ITEM_ID))
            start = clause.start + clause.text.index(lead)
            spans.append((start, start + len(lead), []))
    clauses = _join_lone_completions(clauses)
    for clause in clauses:
        _judge(clause, spans, index)
    quoted = {id(c): (c.start, c.start + len(c.text)) for c in clauses}
    judged: dict[int, int] = {}
    for i, clause in enumerate(clauses):
        if clause.verdict is None:  # a bare mention takes the verdict of what follows it
            at = next((j for j in range(i + 1, len(clauses)) if clauses[j].verdict is not None), None)
            clause.verdict = at is not None and _finished(clauses[at].words, clauses[at].question,
                                                          _outcomes_of(clause.refs, index))
            if at is not None:
                judge = clauses[at]
                judged[i] = at
                quoted[id(clause)] = (min(clause.start, judge.start), max(*quoted[id(clause)], *quoted[id(judge)]))
    return _Reading(text, index, clauses, quoted, judged)


def finished_clauses(items: Sequence[OutlineItem], message: str) -> list[str]:
    """Stage A: the clauses of the message that report something finished (whatever step they are about)."""
    reading = _read_message(items, message)
    return [c.text.strip() for c in reading.clauses if c.verdict]


def completion_claims(items: Sequence[OutlineItem], message: str) -> list[Claim]:
    """The items the message says are finished, in plan order, each once (first reason wins)."""
    text, index, clauses, quoted, judged = _read_message(items, message)
    named: list[list[tuple[int, MatchedBy]]] = []
    for clause in clauses:
        refs = clause.refs
        if clause.verdict and not refs:
            refs = _link(clause, index)
        if clause.verdict:
            words = _words(text[slice(*quoted[id(clause)])])  # a bare mention with the clause that judged it
            refs = [(o, how) for o, how in refs if o not in index.titles or not _not_yet(index.titles[o], words)]
        named.append(refs if clause.verdict else [])
    for i in range(1, len(clauses)):  # a qualifier takes back what the clause before it finished
        # ... and what a bare mention took from it ("Antifoul: port side done, starboard tomorrow")
        finished_by = [i - 1, *(k for k, at in judged.items() if at == i - 1)]
        claimed = {ordinal for k in finished_by for ordinal, _ in named[k]}
        if claimed and (_qualifies_previous(clauses[i]) or _puts_off(clauses[i], claimed, index)) \
                and (not _about_other_items(clauses[i], claimed, index)
                                                            or _pending_on_it(clauses[i], claimed, index)):
            for k in finished_by:
                named[k] = []
    claims: dict[int, Claim] = {}  # by ordinal
    for clause, refs in zip(clauses, named):
        start, end = quoted[id(clause)]
        evidence = message[start:end].strip(" ,;:.—–-")[:EVIDENCE_MAX]
        for ordinal, how in refs:
            if ordinal in index.id_of and ordinal not in claims:
                claims[ordinal] = Claim(index.id_of[ordinal], how, evidence)
    return [claims[ordinal] for ordinal in sorted(claims)]


# Steps whose outcome is given by someone else, not done ("Get IRB approval", "Pass the inspection",
# "Approve the brief"): handing the thing over for it is not the outcome.
_DECIDED_VERBS = frozenset(stem(v) for v in "get obtain secure receive win approve pass clear grant".split())
# Words that say a thing was handed over for a decision still to come.
_HANDED_OVER = frozenset({
    "submitted", "submission", "applied", "application", "lodged", "requested", "request", "filed", "sent",
    "asked", "emailed", "forwarded", "handed",
})
# "for approval", "for Maria's review": what the handing over waits for.
_AWAITED = frozenset({
    "approval", "review", "sign-off", "signoff", "signature", "signatures", "comment", "comments", "feedback",
    "consideration", "decision",
})
# Words that say the decision came.
_DECIDED = frozenset({
    "granted", "approved", "issued", "awarded", "passed", "cleared", "accepted", "signed", "released", "through",
    "secured", "obtained", "won",
})


def _not_yet(title: _Title, words: list[str]) -> bool:
    """Whether a finished-sounding clause says the step's outcome is still to come for this step."""
    return _awaits_decision(title, words) or _scheduled_later(title, words) or _somewhere_else(title, words) \
        or title.verb not in _SCHEDULING and any(w in _SCHEDULED for w in words) or _only_before(title, words)


def _only_before(title: _Title, words: list[str]) -> bool:
    """ "Skeleton is drafted" for "File the skeleton argument": the clause's only past is work that comes before
    the step's outcome, with neither the step's verb, its outcome nor a completion word."""
    pasts = [w for w in words if _is_past(w)]
    return bool(pasts) and all(stem(w) in _PRECURSORS and stem(w) != title.verb for w in pasts) \
        and not any(_is_completion(w) and stem(w) not in _PRECURSORS for w in words) \
        and title.outcomes.isdisjoint(_phrases_in(words))


# Words that say a thing was put in the calendar: they finish only a step that books or arranges it
# ("Driver training booked" does not finish "Train the drivers").
_SCHEDULED = frozenset({"booked", "scheduled", "rescheduled", "arranged", "calendared", "planned", "pencilled",
                        "penciled"})


# Steps that put a thing in its place: "is in" says it is there only when no other place is named.
_PLACING = frozenset(stem(v) for v in "install fit mount hang lay place plant sow replace".split())


def _somewhere_else(title: _Title, words: list[str]) -> bool:
    """ "The boiler is in the van" does not finish "Replace the boiler": for a step that puts a thing in
    its place, a place named after "is in/on/at" that is not the title's own says where it is meanwhile."""
    if title.verb not in _PLACING:
        return False
    for i in range(len(words) - 2):
        if words[i] in ("is", "are") and words[i + 1] in ("in", "on", "at") and words[i + 2] in _DETERMINERS:
            place = content_stems(" ".join(_phrase_after(words, i + 1)))
            if place and place.isdisjoint(title.stems) and not any(w in OUTCOME_WORDS for w in words[i + 2:i + 4]
                                                                   if w not in _STOP):
                return True
    return False


# A step whose outcome is a date to come: "Review set for Friday" finishes "Schedule the review".
_SCHEDULING = frozenset(stem(v) for v in (
    "book reserve schedule arrange plan set organise organize invite confirm order buy purchase pay hire rent").split())
_FUTURE = frozenset({"tomorrow", "soon", "upcoming", "next"})
_WEEKDAYS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"})
# A clause not finished itself that names one of these puts work off until later.
_LATER = _FUTURE | _WEEKDAYS | {"tonight", "later"}


def _scheduled_later(title: _Title, words: list[str]) -> bool:
    """ "The single is out on Friday", "Live next week": a state given a day to come says when it will
    be, unless the step is the scheduling; a day with a past tense ("Released on Friday") or after
    "last" is when it was."""
    if title.verb in _SCHEDULING:
        return False
    if any(w in _FUTURE for w in words):
        return True
    return any(w in _WEEKDAYS for w in words) and "last" not in words \
        and not any(_is_completion(w) or w in IRREGULAR for w in words)


def _awaits_decision(title: _Title, words: list[str]) -> bool:
    """Whether the clause only hands the step's thing over for a decision still to come: "Brief sent to
    Maria for approval" does not finish "Approve the brief" ("for approval" is fine when the title says
    it: "Submit the brief for approval"), and "Licence application lodged" does not finish "Obtain the
    licence" (a step whose verb is a decision or a result given) unless the decision is said too."""
    awaited = {w for i, w in enumerate(words) if w in _AWAITED and "for" in words[max(0, i - 3):i]}
    if any(stem(w) not in title.stems for w in awaited):
        return True
    return title.verb in _DECIDED_VERBS and any(w in _HANDED_OVER for w in words) \
        and not any(w in _DECIDED for w in words)


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
