"""Plan progress from messages: which plan steps a message finishes for certain, and which it may finish.

Pure and deterministic (no I/O, no model). A step marked done that is not is the one error we do not
accept (a resumed agent would skip unfinished work), so a rule decides alone only on certain evidence;
a probable finish becomes a question ("may be finished: step N (message m)") that the configured model,
the calling agent or a person answers. docs/api.md, "Plan progress from messages", says the same for users.

Decision table. The message is cut into clauses (sentence ends, ";", ": ", ", ", dashes, "but", "however",
"though"; "and" only between two step references or two statements that each say something finished). A
clause that only names steps ("Step 2:") takes the next clause's words; one of cue words alone ("…: signed")
is said of the clause before it. The words are data in core/plan_words and core/plan_outcomes.

  | stage | the clause                                                                      | outcome  |
  |-------|---------------------------------------------------------------------------------|----------|
  | A     | is in a sentence that asks ("?"), or negates (not, never, n't; "no errors" is    | nothing  |
  |       |   fine), or says failure, work going on, a condition (if, unless)               |          |
  | A     | says intent before its cue (will, next, once, need …), a time to come ("in 2      | nothing  |
  |       |   weeks"), or a part of the whole (12 of 40, 3/5, 60%, so far, "the section of") |          |
  | A     | has no cue: a completion word (done, ✓), a past form, an outcome of the           | nothing  |
  |       |   outcome table (is live, went out) or a weak cue (ok, ready, sorted, came)       |          |
  | A     | is followed by a clause with no cue that qualifies it about no other step         | nothing  |
  |       |   ("…, but not signed", "…; the rest tonight", "…, I'll send it Monday")          |          |
  | B     | names the step by number, ordinal, range or id ("step 2", "#2", "steps 1-3", "m2", | complete |
  |       |   "tests: done"), with a strong cue (not a weak one alone: that asks)             |          |
  | B     | says every content word of the title but its verb, with the title's verb in a     | complete |
  |       |   past form, a completion word or the verb's outcome; or the object's head with  |          |
  |       |   the verb's past ("Image built" for "Build the Docker image"); one title best    |          |
  | B     | …the same, but a guard fires (below), or two titles fit as well                   | ask      |
  | B     | names the head of the title's object, the title's initials ("TPs" for "test      | ask      |
  |       |   pressings"), or a title word with the verb's outcome; at most two titles best  |          |
  | B     | names nothing but the past of one step's verb ("Submitted!")                      | ask      |
  | B     | otherwise                                                                       | nothing  |

Guards (certain evidence only asks): the step is a decision or a result given by others (get, approve,
pass …) and the clause hands its thing over (submitted, lodged) or sends it "for approval"; it puts in the
calendar a step that does not book or arrange; it gives a day to come with no past ("out on Friday"); it
names a place where the thing is ("The boiler is in the van"); one of a title's two verbs is said ("Hall
floor sanded" for "Sand and varnish"); its only past is work before the outcome (drafted, ordered); or it
names a rival of the title's object: another modifier or a noun of its own beside the head ("the staging
database", "the report template"), one of a plural object ("track 3"), another number, or no place or party
of the title's ("to production"). An ask is dropped when such earlier work is the clause's only past and no
verb of the step is said ("Invitations drafted" for "Send the invitations").

Whether a finding is applied (dependencies completed, status not set by a caller) is decided by
applicable_claims; the store applies completions and records questions in the transaction that stores the
message, and a question leaves every view once answered or once its step changes status.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import re
from collections.abc import Sequence
from typing import NamedTuple

from taskmem.core.messages import Kind, Role
from taskmem.core.plan_outcomes import IRREGULAR, NOT_COMPLETION, OUTCOMES, stem
from taskmem.core.plan_words import (AWAITED, COMPLETION, CONTRAST, DECIDED_VERBS, FAILURE, HANDED_OVER, INTENT,
                                    LATER, NEGATION, NEUTRAL_ED, ONGOING, PART, PARTIAL_PHRASES, PRECURSORS,
                                    PREPOSITIONS, SCHEDULING, SPANS, STOP, WEAK_CUES)
from taskmem.core.plans import DONE, ItemStatus, PlanItem, StatusSource

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


class ItemOutline(NamedTuple):
    id: str
    ordinal: int
    title: str
    status: ItemStatus
    status_source: StatusSource
    depends_on: list[str]


OutlineItem = ItemOutline | PlanItem  # what inference reads of a plan item


@dataclasses.dataclass(frozen=True)
class Claim:
    """The message says this item is finished (certain) or may be (a question); evidence is the clause."""

    item_id: str
    matched_by: MatchedBy
    evidence: str
    certain: bool = True
    why: str = ""  # for a question: the rule that kept it from being certain


# --- references ---------------------------------------------------------------------------------

_NUMBER_WORDS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve"
                                            " thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
                                            .split())}
_ORDINAL_WORDS = {w: n for n, w in enumerate("zeroth first second third fourth fifth sixth seventh eighth ninth"
                                             " tenth eleventh twelfth".split())}
_NUM = r"(?:\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
_RANGE = rf"{_NUM}(?:\s*/\s*\d{{1,3}})?(?:\s*(?:-|–|to|through|thru)\s*{_NUM})?"
_LIST = rf"{_RANGE}(?:\s*(?:,\s*and|,|and|&|\+)\s*(?:steps?\s*)?#?\s*{_RANGE})*"
_STEP_WORD = r"\b(?:steps?|items?)\s*(?:no\.\s*|number\s*)?#?|(?<!\w\s)(?<![\w#])#"  # "step 2", "#2" (not "issue #2")
_STEP_NUMBERS = re.compile(rf"(?:{_STEP_WORD})\s*(?P<list>{_LIST})(?!\w|\.\w)")
_ONE_NUMBER = re.compile(rf"(?P<a>{_NUM})(?:\s*/\s*\d{{1,3}})?(?:\s*(?:-|–|to|through|thru)\s*(?P<b>{_NUM}))?")
_ORDINAL = r"(?:\d{1,2}(?:st|nd|rd|th)|last|final|" + "|".join(_ORDINAL_WORDS) + ")"
_STEP_ORDINALS = re.compile(rf"\b(?P<ordinal>{_ORDINAL})\s+(?:steps?|items?)\b")
_STEP_RUNS = re.compile(rf"\b(?P<end>first|last)\s+(?P<count>{_NUM})\s+(?:steps|items)\b")
_ID_RUN = re.compile(r"[\w.-]+")
_CLAUSE_END = re.compile(r"[;!?\n]+|[.:,](?=\s|$)|\s[—–-]+\s|(?<!\d)[—–](?!\d)"
                         r"|(?=\b(?:but|however|though|although)\b)")
_TOKEN = re.compile(r"✓|[a-z0-9]+(?:['._/:&+-][a-z0-9]+)*%?")
_COUNT = re.compile(r"^(\d{1,6})/(\d{1,6})$")
_PERCENT = re.compile(r"^(\d{1,3})%$")

Span = tuple[int, int, list[tuple[int, MatchedBy]]]


def _normalise(text: str) -> str:
    text = text.lower().replace("’", "'").replace("‘", "'")
    return re.sub(r"✅|☑️?|✔️?|\[x\]", " ✓ ", text)


def _words(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _number(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def _reference_spans(text: str, items: Sequence[OutlineItem]) -> list[Span]:
    """(start, end, refs) of "step N…", "Nth step", "the first two steps" and ids with a digit or punctuation."""
    count, spans = len(items), []
    for match in _STEP_NUMBERS.finditer(text):
        ordinals: list[int] = []
        for part in _ONE_NUMBER.finditer(match.group("list")):
            first = _number(part.group("a"))
            last = _number(part.group("b")) if part.group("b") else first
            ordinals.extend(range(first - 1, last))
        spans.append((match.start(), match.end(), [(o, MatchedBy.STEP_NUMBER) for o in ordinals if 0 <= o < count]))
    for match in _STEP_RUNS.finditer(text):
        n = min(_number(match.group("count")), count)
        run = range(n) if match.group("end") == "first" else range(count - n, count)
        spans.append((match.start(), match.end(), [(o, MatchedBy.STEP_NUMBER) for o in run]))
    for match in _STEP_ORDINALS.finditer(text):
        word = match.group("ordinal")
        ordinal = count - 1 if word in ("last", "final") else \
            int(word[:-2]) - 1 if word[0].isdigit() else _ORDINAL_WORDS[word] - 1
        spans.append((match.start(), match.end(), [(ordinal, MatchedBy.STEP_NUMBER)] if 0 <= ordinal < count else []))
    ids = {item.id.lower(): item.ordinal for item in items if not item.id.isalpha() and not item.id.isdigit()}
    for match in _ID_RUN.finditer(text):
        run = match.group().rstrip(".-")  # "m2." ends a sentence; "m22" and "m2-old" are other names
        if run in ids:
            spans.append((match.start(), match.start() + len(run), [(ids[run], MatchedBy.ITEM_ID)]))
    return spans


# --- stage A: is the clause a report that something is finished? ----------------------------------

def _is_past(word: str) -> bool:
    if word in IRREGULAR:
        return word not in NOT_COMPLETION
    return len(word) >= 5 and word.endswith("ed") and not word.endswith("eed") and "_" not in word \
        and word not in NEUTRAL_ED and word not in FAILURE and word not in ONGOING and not word.startswith("un")


def _is_cue(word: str) -> bool:
    return word in COMPLETION or _is_past(word)


@functools.lru_cache(maxsize=1024)
def _by_first_word(outcomes: frozenset[tuple[str, ...]]) -> dict[str, list[tuple[str, ...]]]:
    starting: dict[str, list[tuple[str, ...]]] = {}
    for phrase in sorted(outcomes):
        starting.setdefault(phrase[0], []).append(phrase)
    return starting


def _outcome_at(words: list[str], outcomes: frozenset[tuple[str, ...]]) -> int | None:
    """Where one of the outcome phrases starts ("the site's live" reads "the site is live")."""
    expanded: list[tuple[int, str]] = []
    for i, word in enumerate(words):  # "are all in" is "are in"
        if word not in ("all", "already", "finally", "fully", "both"):
            expanded.extend([(i, word[:-2]), (i, "is")] if word.endswith("'s") else [(i, word)])
    plain, starting = [w for _, w in expanded], _by_first_word(outcomes)
    for j in range(len(plain)):
        for phrase in starting.get(plain[j], ()):
            if tuple(plain[j:j + len(phrase)]) == phrase:
                after = plain[j + len(phrase):j + len(phrase) + 1]  # "is in draft" is another state
                if len(phrase) > 1 and phrase[-1] in ("in", "up", "out", "on", "back") and after \
                        and after[0] not in STOP and after[0] not in PREPOSITIONS and not _is_cue(after[0]):
                    continue
                return expanded[j][0]
    return None


_ALL_OUTCOMES = frozenset(phrase for phrases in OUTCOMES.values() for phrase in phrases)
_ALL_WORDS = frozenset(w for phrase in _ALL_OUTCOMES for w in phrase)


def _first_cue(words: list[str]) -> int | None:
    found = [i for i, w in enumerate(words) if _is_cue(w) or w in WEAK_CUES][:1]
    outcome = _outcome_at(words, _ALL_OUTCOMES)
    return min([*found, *([outcome] if outcome is not None else [])], default=None)


def _phrase_in(words: list[str], phrases: Sequence[tuple[str, ...]]) -> bool:
    return any(tuple(words[i:i + len(p)]) == p for p in phrases for i in range(len(words)))


def _partial(words: list[str]) -> bool:
    """A count short of the whole ("12 of 40", "7/9", "two of the three", "60%" that is no measure)."""
    def number(word: str) -> int | None:
        return int(word) if word.isdigit() else _NUMBER_WORDS.get(word)
    for i, word in enumerate(words):
        count = _COUNT.match(word)
        percent = _PERCENT.match(word)
        if count and int(count.group(1)) < int(count.group(2)):
            return True
        if percent and int(percent.group(1)) < 100 and not (i + 1 < len(words) and words[i + 1].isalpha()
                                                            and words[i + 1] not in STOP and not _is_cue(words[i + 1])):
            return True  # "60% done"; "a 70% turnout" is a measure of the result
        rest = [w for w in words[i + 1:i + 5] if w not in ("the", "a", "our", "my")]
        rest = rest[2:] if rest[:2] == ["out", "of"] else rest[1:] if rest[:1] == ["of"] else []
        a, b = number(word), number(rest[0]) if rest else None
        if a is not None and b is not None and a < b:
            return True
        if word in PART and words[i + 1:i + 2] == ["of"]:
            return True  # "the summary section of the report" is a part of it
    return _phrase_in(words, PARTIAL_PHRASES)


def _time_to_come(words: list[str]) -> bool:
    """ "in about 2 weeks", "in 10 days": a span of time from now."""
    return any(w == "in" and any(x in SPANS for x in words[i + 1:i + 4]) for i, w in enumerate(words))


def _blockers(words: list[str]) -> list[str]:
    """The words that say the work is not (known to be) finished ("no errors" is none)."""
    found, harmless = [], -1
    for i, word in enumerate(words):
        after = words[i + 1] if i + 1 < len(words) else ""
        if word in ("no", "without", "zero") and after and not _is_cue(after) and after != "longer" \
                or word == "no" and after[:1].isdigit():  # "no. 12" is a number
            harmless = i + 1
            continue  # "no errors", "without advisories": nothing bad was found
        if i == harmless:
            continue
        if word in NEGATION or word in FAILURE or word in ONGOING or word in ("if", "unless") \
                or word.endswith("n't"):
            found.append(word)
    return found


def _finished(words: list[str], question: bool) -> bool:
    first = _first_cue(words)
    if question or first is None or _blockers(words) or _partial(words) or _time_to_come(words):
        return False
    return not any(w in INTENT or w.endswith("'ll") for w in words[:first])


@dataclasses.dataclass
class _Clause:
    text: str
    start: int
    refs: list[tuple[int, MatchedBy]]
    question: bool
    words: list[str] = dataclasses.field(default_factory=list)  # less the reference spans
    finished: bool = False
    sure: bool = True  # a finished clause that names steps: with a cue of their own (not only a weak one)


def _cut(text: str, spans: list[Span]) -> list[_Clause]:
    inside = set(i for start, end, _ in spans for i in range(start, end))
    cuts = [(m.start(), m.end(), "?" in m.group()) for m in _CLAUSE_END.finditer(text) if m.start() not in inside]
    clauses, begin = [], 0
    for end, resume, question in [*cuts, (len(text), len(text), False)]:
        clauses.extend(_split_and(text, begin, end, spans, question))
        begin = resume
    for clause in clauses:
        end = re.compile(r"[.!\n]|\?+").search(text, clause.start + len(clause.text))  # "Is it laid, or …?"
        clause.question = clause.question or bool(end and end.group().startswith("?"))
        blank = list(clause.text)
        for start, end, _ in spans:
            for i in range(max(start, clause.start), min(end, clause.start + len(blank))):
                blank[i - clause.start] = " "
        clause.words = _words("".join(blank))
    return _join(clauses)


def _split_and(text: str, begin: int, end: int, spans: list[Span], question: bool) -> list[_Clause]:
    """A piece cut at "and"/"then" between two step references or two statements that each say finished."""
    def clause(start: int, stop: int) -> _Clause:
        refs = [r for s, _, rs in spans if start <= s < stop for r in rs]
        return _Clause(text[start:stop], start, refs, question)
    points = []
    for m in re.finditer(r"\b(?:and|then|while)\b", text[begin:end]):
        at = begin + m.start()
        left, right = _words(text[begin:at]), _words(text[at + len(m.group()):end])
        both_name = any(s < at for s, _, r in spans if begin <= s) and any(at < s < end for s, _, _ in spans)
        if both_name or (_first_cue(left) is not None and _first_cue(right) is not None and right
                         and not _is_cue(right[0]) and len([w for w in right if w not in STOP]) > 1):
            points.append(at)
    bounds = [begin, *points, end]
    return [clause(a, b) for a, b in zip(bounds, bounds[1:])]


def _join(clauses: list[_Clause]) -> list[_Clause]:
    """A clause that only names steps takes the next one's words; one of cue words alone joins the one before."""
    out: list[_Clause] = []
    for clause in clauses:
        if not clause.text.strip():
            continue
        content = [w for w in clause.words if w not in STOP and w != "#"]
        if out and content and all(_is_cue(w) or w in ("all", "now") for w in content) and not clause.refs:
            prev = out[-1]
            out[-1] = dataclasses.replace(prev, text=prev.text + ": " + clause.text, words=prev.words + clause.words,
                                          question=prev.question or clause.question)
        elif out and out[-1].refs and not [w for w in out[-1].words if w not in STOP and w != "#"]:
            prev = out[-1]
            out[-1] = dataclasses.replace(clause, text=prev.text + ": " + clause.text, start=prev.start,
                                          refs=prev.refs + clause.refs)
        else:
            out.append(clause)
    return out


def _qualifies(clause: _Clause, claimed: set[int], titles: dict[int, _Title]) -> bool:
    """ "…, but not yet signed", "…; the rest tonight", "…: 7/9", "…, results in 2 weeks": a clause with no
    finished cue of its own that takes back what the clause before it finished, unless it speaks of
    another step (names one, or another step's verb)."""
    words = clause.words
    if clause.finished or not words:
        return False
    takes_back = words[0] in CONTRAST or words[0].endswith("n't") or _partial(words) or _time_to_come(words) \
        or bool(_blockers(words)) or any(w in LATER or w in INTENT or w.endswith("'ll") for w in words)
    other = any(o not in claimed for o, _ in clause.refs) or any(
        o not in claimed and t.verb in {stem(w) for w in words} for o, t in titles.items())
    return takes_back and not other


# --- stage B: which step does a finished clause finish? -----------------------------------------

class _Title(NamedTuple):
    """A title read as "<verb> [particle] <object> [<preposition> <complement>]"."""

    verb: str
    object: frozenset[str]
    complement: frozenset[str]
    heads: frozenset[str]  # the last noun of each of the object's parts ("the regulator and MCU")
    initials: frozenset[str]  # "tp" for "the test pressings": the object's and the whole title's initials
    outcomes: frozenset[tuple[str, ...]]
    numbers: frozenset[str]  # "Order Year 9 textbooks": "Year 10 textbooks" is another thing
    also: str  # a second verb ("Sand and varnish the floor"): its outcome is needed too
    plural: bool  # "Master the tracks": "track 3 is mastered" is one of them


def _stems(words: Sequence[str]) -> frozenset[str]:
    """Content words' stems; a compound's parts count too ("sign-off" says "sign")."""
    parts = [p for w in words for p in ([w, *w.split("-")] if "-" in w else [w])]
    parts = [re.sub(r"'(?:s|ve|re|m|d)$", "", w) for w in parts]  # "we've" is "we", "the site's" the site
    return frozenset(stem(w) for w in parts if w not in STOP and w != "✓" and not w.isdigit())


@functools.lru_cache(maxsize=1024)
def _read_title(title: str) -> _Title | None:
    words = _words(_normalise(title))
    if not words:
        return None
    rest = words[2:] if len(words) > 1 and words[1] in ("up", "out", "off", "down", "over", "back", "in") else words[1:]
    also = ""
    if len(rest) > 2 and rest[0] == "and":  # "Sand and varnish the floor": both must be said
        also, rest = stem(rest[1]), rest[2:]
    cut = next((i for i, w in enumerate(rest) if w in PREPOSITIONS), len(rest))
    phrase, outcomes = rest[:cut], OUTCOMES.get(stem(words[0]), frozenset())
    if stem(words[0]) in DECIDED_VERBS and len(phrase) > 1 and _is_past(phrase[-1]):  # "Get the route approved"
        outcomes, phrase = outcomes | OUTCOMES.get(stem(phrase[-1]), frozenset()) | {(phrase[-1],)}, phrase[:-1]
    obj, comp = [w for w in phrase if w not in STOP], [w for w in rest[cut:] if w not in STOP]
    parts = " ".join(w for w in phrase if not w.isdigit()).split(" and ")
    if not obj:
        obj, comp = comp, []
    letters = [p for w in obj for p in w.split("-") if p.isalpha()]
    initials = {"".join(p[0] for p in letters), "".join(w[0] for w in words if w not in STOP)}
    last = [p.split()[-1].split("-")[-1] for p in parts if p.split() and p.split()[-1] not in STOP]
    return _Title(stem(words[0]), _stems(obj), _stems(comp), frozenset(stem(w) for w in last if w),
                  frozenset(i for i in initials if len(i) >= 2), outcomes,
                  frozenset(w for w in words if any(c.isdigit() for c in w)), also,
                  bool(last) and len(last[-1]) > 3 and last[-1].endswith("s") and not last[-1].endswith("ss"))


def _acronyms(original: str) -> frozenset[str]:
    """Words written in capitals in the message ("TPs", "PI", "CRS"), lower-cased without a plural s."""
    return frozenset(m.lower().removesuffix("s") for m in re.findall(r"\b[A-Z]{2,5}s?\b", original))


def _rival(title: _Title, words: list[str], stems: frozenset[str]) -> str:
    """Why the clause may speak of another thing than the title's object: another modifier before its
    head ("the staging database"), or another place after the title's preposition."""
    said = title.object | title.complement
    for i, word in enumerate(words):
        if stem(word.removesuffix("'s")) not in title.heads:
            continue
        before, after = words[i - 1] if i else "", words[i + 1] if i + 1 < len(words) else ""
        if before.isalpha() and before not in STOP and stem(before) not in said and not _is_cue(before) \
                and stem(before) != title.verb:
            return f"'{before} {word}' may be another thing"
        if after.isalpha() and after not in STOP and after not in PREPOSITIONS and stem(after) not in said \
                and not _is_cue(after) and after not in _ALL_WORDS and not after.endswith("ly") \
                and not word.endswith("'s"):
            return f"'{word} {after}' may be another thing"
        if title.plural and (after[:1].isdigit() or not word.endswith("s") and (
                not after or _is_cue(after) or after in STOP or after in PREPOSITIONS)):
            return f"'{word} {after}' may be some of them"  # "track 3 is mastered", "transects 1-5" 
    if title.complement and title.complement - stems:
        return "its place or party is not said"
    if not title.numbers <= set(words):
        return _NUMBER
    return ""


_PLACED = "a place is named: it may only be there"
_NUMBER = "another number is said"


def _guard(title: _Title, words: list[str]) -> str:
    """Why a finished clause may not finish this step yet (empty: nothing stands in the way)."""
    pasts = {stem(w) for w in words if _is_past(w)}
    if title.verb in DECIDED_VERBS and any(w in HANDED_OVER for w in words):
        return "handed over for a decision still to come"
    if any(w in AWAITED for w in words) and "for" in words and not _stems([w for w in words if w in AWAITED]) \
            <= title.object | title.complement:
        return "sent for a decision still to come"
    if title.verb not in SCHEDULING and any(w in ("booked", "scheduled", "arranged") for w in words):
        return "put in the calendar"
    if title.also and not {title.also, title.verb} <= pasts and not any(w in COMPLETION for w in words):
        return "only one of its two verbs is said"
    if title.verb not in SCHEDULING and any(w in LATER for w in words) and not pasts:
        return "its outcome is given a day to come"
    place = re.search(r"\b(?:is|are) (?:in|on|at) (?:the|a|an|our|my) ([a-z]+)", " ".join(words))
    if place and stem(place.group(1)) not in title.object | title.complement and title.verb not in pasts \
            and not any(w in COMPLETION for w in words):
        return _PLACED  # "The boiler is in the van"
    if pasts and all(w in PRECURSORS and w != title.verb for w in pasts) \
            and not any(w in COMPLETION for w in words) and _outcome_at(words, title.outcomes) is None:
        return "only the work before it is said"
    return ""


def _link(clause: _Clause, titles: dict[int, _Title], acronyms: frozenset[str]) -> list[tuple[int, bool, str]]:
    """(ordinal, certain, why) of the steps a finished clause finishes or may finish."""
    words = clause.words
    verbs = {t.verb for t in titles.values()}
    purpose = next((i for i in range(len(words) - 1) if words[i] == "to" and stem(words[i + 1]) in verbs), None)
    words = words[:purpose]  # "Installed Xcode to build the app": what was done comes before the purpose
    stems, pasts = _stems(words), frozenset(stem(w) for w in words if _is_past(w))
    completion = any(w in COMPLETION for w in words)
    certain: list[tuple[int, int, str]] = []
    asked: list[tuple[int, int]] = []
    for ordinal, title in titles.items():
        said = title.object | title.complement
        if not (said | title.heads) & stems and title.verb not in stems | pasts \
                and not title.initials & (acronyms | set(words)):
            continue  # names nothing of this step (most steps of a long plan): no outcome to look for
        own = title.verb in pasts or completion or _outcome_at(words, title.outcomes) is not None
        if title.object and (said <= stems and own or title.verb in pasts and title.heads <= stems
                             and not title.complement):  # "Image built" for "Build the Docker image"
            why = _guard(title, words) or _rival(title, words, stems)
            if why.endswith("another thing") and title.object - title.heads - stems \
                    or why == _NUMBER and any(w[:1].isdigit() for w in words):
                continue  # "the west fence" for "the east fence", "Year 10" for "Year 9": another thing for sure
            certain.append((ordinal, len(said & stems), why))
        elif title.heads & stems or title.initials & (acronyms | set(words)) or own and said & stems \
                or said & stems and (len(said & stems) >= 2 or len(stems) <= 3) \
                or completion and title.verb in stems:  # "Demo and rewiring both finished"
            if _guard(title, words) in ("", _PLACED) or title.verb in pasts:
                asked.append((ordinal, len((said | {title.verb}) & (stems | pasts))))
    if not certain and not asked:  # "Submitted!", "We passed!!": the past of one step's verb, naming no other step
        verbs = [o for o, t in titles.items() if t.verb in pasts]
        if len(verbs) == 1 and stems <= pasts:
            return [(verbs[0], False, "only the step's verb is said")]
    if certain:
        best = max(n for _, n, _ in certain)
        top = [(o, why) for o, n, why in certain if n == best]
        return [(o, len(top) == 1 and not why, why or "another step fits as well") for o, why in top]
    if not asked:
        return []
    best = max(n for _, n in asked)
    top = [o for o, n in asked if n == best]
    return [(o, False, "the step's words are only partly said") for o in top] if len(top) <= 2 else []


# --- the reading --------------------------------------------------------------------------------

def _read(items: Sequence[OutlineItem], message: str) -> tuple[list[_Clause], dict[int, _Title]]:
    text = _normalise(message)
    spans = _reference_spans(text, items)
    titles = {item.ordinal: t for item in items if (t := _read_title(item.title))}
    plain = {item.id.lower(): item.ordinal for item in items if item.id.isalpha()}
    clauses = _cut(text, spans)
    for clause in clauses:
        lead = re.match(r"\W*([a-z]+):", clause.text)
        if lead and lead.group(1) in plain:  # "tests: passed" for the id "tests"; "tests passed" is title words
            clause.refs.append((plain[lead.group(1)], MatchedBy.ITEM_ID))
            clause.words = clause.words[1:]
        clause.finished = _finished(clause.words, clause.question)
        if clause.refs and clause.finished:  # "Step 3 is at 80%" says no outcome of step 3's own: it only asks
            own = frozenset().union(*(titles[o].outcomes for o, _ in clause.refs if o in titles))
            clause.sure = any(_is_cue(w) for w in clause.words) or _outcome_at(clause.words, own) is not None
    return clauses, titles


def finished_clauses(items: Sequence[OutlineItem], message: str) -> list[str]:
    """Stage A: the clauses of the message that report something finished (whatever step they are about)."""
    return [c.text.strip() for c in _read(items, message)[0] if c.finished]


def progress_findings(items: Sequence[OutlineItem], message: str) -> list[Claim]:
    """Every step the message finishes (certain) or may finish (a question), in plan order, each once;
    a step both finished and asked about is finished."""
    clauses, titles = _read(items, message)
    acronyms = _acronyms(message)
    id_of = {item.ordinal: item.id for item in items}
    found: list[list[tuple[int, MatchedBy, bool, str]]] = []
    for clause in clauses:
        if not clause.finished:
            found.append([])
        elif clause.refs:
            whys = [(_guard(titles[o], clause.words) if o in titles else "") or
                    ("" if clause.sure else "the step is named but no finished verb is said") for o, _ in clause.refs]
            found.append([(o, how, not why, why) for (o, how), why in zip(clause.refs, whys)])
        else:
            found.append([(o, MatchedBy.TITLE, sure, why) for o, sure, why in _link(clause, titles, acronyms)])
    for i in range(1, len(clauses)):
        if found[i - 1] and _qualifies(clauses[i], {o for o, *_ in found[i - 1]}, titles):
            found[i - 1] = []
    claims: dict[int, Claim] = {}
    for clause, links in zip(clauses, found):
        start = clause.start
        evidence = message[start:start + len(clause.text)].strip(" ,;:.—–-")[:EVIDENCE_MAX]
        for ordinal, how, sure, why in links:
            if ordinal in id_of and (ordinal not in claims or sure and not claims[ordinal].certain):
                claims[ordinal] = Claim(id_of[ordinal], how, evidence, sure, "" if sure else why)
    return [claims[o] for o in sorted(claims)]


def completion_claims(items: Sequence[OutlineItem], message: str) -> list[Claim]:
    """The steps the message finishes by certain evidence."""
    return [c for c in progress_findings(items, message) if c.certain]


def reads_message(role: Role, kind: Kind, content: str) -> bool:
    """Whether a message can finish anything: written by an agent or person, with a cue in it (cheap: spares the
    store reading the plan for the many messages that cannot)."""
    return role in INFERRING_ROLES and kind in INFERRING_KINDS and _first_cue(_words(_normalise(content))) is not None


def applicable_claims(items: Sequence[OutlineItem], claims: Sequence[Claim]) -> list[Claim]:
    """The claims that may mark their item COMPLETED (or ask about it).

    An item is left alone when a caller set its status (UpdatePlanItem always wins), when it is
    already done or FAILED, or when any of its dependencies is not COMPLETED or SKIPPED — counting
    the items this same message completes for certain ("steps 1-3 done" completes a chain).
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
                if claim.certain:
                    done.add(claim.item_id)
                applied.append(claim)
                waiting.remove(claim)
                progressed = True
    order = {item.id: item.ordinal for item in items}
    return sorted(applied, key=lambda c: order[c.item_id])
