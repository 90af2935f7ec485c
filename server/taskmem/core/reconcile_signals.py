"""Lexical signals for reconciling two state items: change language, what a change names,
and whether two similar texts differ in a contrasting slot.

Sentence embeddings (MiniLM and friends) place "Cache embeddings client-side" and "... server-side"
closer (0.94) than many true paraphrases (0.82-0.91), and "Use Memcached for caching instead of
Redis" far from "Use Redis for caching" (0.80). Cosine alone cannot tell a duplicate from a
contradiction, so these deterministic checks decide what cosine cannot. Pure functions, no I/O.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
from collections.abc import Mapping, Sequence

from taskmem.core.reconcile_lexicon import (
    POLAR_SCALES,
    PROPERTY_VIOLATIONS,
)
from taskmem.core.reconcile_values import BOUNDS, UNIT_TOKENS, canonical_text, measured_dimensions
from taskmem.core.state_items import SUPERSESSION_TRIGGERS, normalize_text

# --------------------------------------------------------------------------- tokens

# Function words that carry no slot. Kept out on purpose: negations, and words that are one side of
# an antonym pair (before/after, up/down, on/off, in/out...).
_STOPWORDS = frozenset("""
a an the this that these those it its is are was were be been being am do does did doing done
to of for with by at from as into onto about via per and or but so if then than too very
we us our you your they them their i me my he she his her one ones some any each every all both
should would could can may might must shall will has have had having need needs needed
let lets let's please also just only still now yet again there here what which who whom whose
when where why how whether
""".split())

_NEGATIONS = frozenset({"not", "no", "never", "without", "none", "nothing", "cannot", "nor", "neither",
                        "disallow", "forbid", "forbidden", "prohibit", "prohibited", "avoid"})
_CONTRACTED_NOT = re.compile(r"\b(\w+)n't\b")


_NUMBER_WORDS: Mapping[str, str] = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "fifteen": "15",
    "twenty": "20", "thirty": "30", "fifty": "50", "hundred": "100", "thousand": "1000",
    "single": "1", "once": "1", "twice": "2", "half": "0.5", "dozen": "12",
}

_IDENTIFIER = re.compile(r"(?=[a-z0-9.-]*[a-z])(?=[a-z0-9.-]*\d)[a-z0-9]+(?:[.-][a-z0-9]+)+")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_.+#-]*[a-z0-9+#]|[a-z0-9]")


def _stem(word: str) -> str:
    """A deliberately light stemmer so limit/limits/limited and cache/caching compare equal:
    aliases first, then -ing, -ied, -ed, plural -s, and a final -e."""
    if not word.isalpha():
        return word
    if len(word) > 7 and word.endswith("ly"):
        word = word[:-2]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ied"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith("ed") and not word.endswith("eed"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) >= 3 and word.endswith("e"):
        word = word[:-1]
    return word


@functools.lru_cache(maxsize=8192)
def _split_words(normal: str) -> tuple[str, ...]:
    normal = _CONTRACTED_NOT.sub(lambda m: f"{m.group(1)} not", normal).replace("can not", "cannot")
    normal = canonical_text(normal)
    words: list[str] = []
    for raw in _TOKEN.findall(normal):
        # Hyphenated compounds compare by part ("client-side" -> client side), identifiers
        # with dots stay whole ("orders.status", "1.24").
        # So do hyphenated identifiers with a digit ("us-east-1", "x86-64", "gpt-4o"): their parts name nothing.
        parts = [raw] if re.fullmatch(r"[\d.]+|[a-z_]+\.[a-z_.]+", raw) or _IDENTIFIER.fullmatch(raw) \
            else raw.split("-")
        words.extend(part for part in parts if part)
    return tuple(words)


def content_tokens(text: str) -> list[str]:
    """Lowercased, stemmed, alias-folded words without stopwords or negations, in order.
    Number words become digits ("three" -> "3"); values, units and bounds are canonical
    (reconcile_values.canonical_text)."""
    return list(_content_tokens(text))


@functools.lru_cache(maxsize=8192)
def _content_tokens(text: str) -> tuple[str, ...]:
    tokens = []
    for word in _split_words(normalize_text(_disambiguate(text))):
        if word in _STOPWORDS or word in _NEGATIONS:
            continue
        word = _NUMBER_WORDS.get(word, word)
        tokens.append(_canonical_token(word))
    return tuple(tokens)


def _canonical_token(word: str) -> str:
    """A word's token: canonical value words (units, bounds, time zones) as they are, others stemmed."""
    return word if word in UNIT_TOKENS or word in BOUNDS or word.startswith("tz_") else _stem(word)


def _disambiguate(text: str) -> str:
    """Capitalised words that lowercase into stopwords: the month "May" (not the modal) and the
    country "US" (not the pronoun), anywhere but at the start."""
    return re.sub(r"(?<=\S)(\s+)(?:May\b|US\b)", lambda m: m.group(1) + ("Maymonth" if m.group(0).strip() == "May"
                                                                        else "USA"), text)


def negation_count(text: str) -> int:
    return sum(1 for word in _split_words(normalize_text(text)) if word in _NEGATIONS)


def _proper_nouns(text: str) -> set[str]:
    """Canonical tokens of words written with a capital or a digit-bearing name anywhere but at the
    start of the text: product, place and people names ("Memcached", "EU", "Node 20")."""
    names: set[str] = set()
    words = re.findall(r"[A-Za-z][A-Za-z0-9.+#]*", _disambiguate(text))
    for index, word in enumerate(words):
        if index == 0:
            continue
        if word[0].isupper() or any(c.isupper() for c in word[1:]):
            names.update(content_tokens(word))
    return names


# --------------------------------------------------------------------------- contrast

# Pairs of values that exclude each other: if two otherwise aligned texts differ by one of them,
# they contradict. General engineering vocabulary, not tuned to any one pair.
_ANTONYM_GROUPS: tuple[frozenset[str], ...] = tuple(frozenset(_stem(w) for w in group.split()) for group in (
    "client server", "frontend backend", "sync synchronous async asynchronous", "public private",
    "public internal", "internal external", "enable disable", "enabled disabled", "allow deny block",
    "up down", "before after", "short long", "min minimum max maximum", "increase decrease",
    "on off", "true false", "include exclude", "local remote", "read write", "push pull poll",
    "static dynamic", "manual automatic", "eager lazy", "optimistic pessimistic", "horizontal vertical",
    "primary replica secondary", "spot demand reserved", "staging production", "first last",
    "encrypted unencrypted plaintext", "inbound outbound", "upper lower", "start end", "open closed",
    "hourly daily nightly weekly monthly yearly quarterly", "more less fewer", "before during after", "higher lower",
    "faster slower", "bigger smaller", "early late", "blocking nonblocking non-blocking",
    "cookie token", "email sms slack phone", "windows linux macos", "arm arm64 x86 x86-64 amd64",
    "mutable immutable", "stateful stateless", "monolith microservice", "ascending descending",
    "inclusive exclusive", "required optional", "strict lenient", "soft hard",
    "monday tuesday wednesday thursday friday saturday sunday weekend weekday",
    "january february march april maymonth june july august september october november december",
    "morning afternoon evening night am pm noon midnight", "today tomorrow yesterday",
    "millisecond second minute hour day week month quarter year",
    "north south east west northeast northwest southeast southwest",
    # Units of one dimension, and the systems they belong to: "weigh in grams" / "in ounces".
    "gram grams kilogram kilograms kg ounce ounces pound pounds lb lbs tonne tonnes",
    "metre metres meter meters kilometre kilometres km mile miles foot feet inch inches yard yards",
    "litre litres liter liters millilitre millilitres gallon gallons pint pints",
    "celsius fahrenheit kelvin", "metric imperial",
))

_ALL_GROUP_WORDS: frozenset[str] = frozenset(w for group in _ANTONYM_GROUPS for w in group)

# A negation flip contradicts only when the rest is nearly the same: with more rewording the
# negation is usually said positively on the other side ("may not leave the EU" / "keep inside the EU").
NEGATION_MIN_ALIGNMENT = 0.7

_NUMERIC = re.compile(r"^\d+(?:[.,:]\d+)*(?:am|pm|st|nd|rd|th|k|m|x|h)?$")


@dataclasses.dataclass(frozen=True)
class Contrast:
    """Why two aligned texts are taken to say different things: the kind of slot and its values."""

    kind: str  # number | antonym | name | negation | choice
    old_value: str
    new_value: str

    def as_evidence(self) -> dict[str, str]:
        return {"kind": self.kind, "old": self.old_value, "new": self.new_value}


@dataclasses.dataclass(frozen=True)
class Alignment:
    """How two texts line up word by word (content tokens): the share of tokens they have in the
    same order (difflib ratio), and the differing spans."""

    ratio: float
    differences: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
    common: frozenset[str]
    ends_differ: bool = False  # the last difference runs to the end of both texts

    @property
    def final_substitution(self) -> bool:
        """Exactly one span of one or two words replaced by another at the end of both texts,
        everything before it equal ("roll out firmware 2.3 to the thermostats" / "... to the door
        sensors"): the same frame aimed at another object. A replaced verb or subject earlier in
        the text ("who owns the service" / "which team is responsible for the service") is
        rewording, not another object."""
        if len(self.differences) != 1 or not self.ends_differ:
            return False
        old_span, new_span = self.differences[0]
        return 0 < len(old_span) <= 2 and 0 < len(new_span) <= 2


def align(old_text: str, new_text: str) -> Alignment:
    a, b = content_tokens(old_text), content_tokens(new_text)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    opcodes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    differences = tuple((tuple(a[i1:i2]), tuple(b[j1:j2])) for _, i1, i2, j1, j2 in opcodes)
    ends_differ = bool(opcodes) and opcodes[-1][2] == len(a) and opcodes[-1][4] == len(b)
    return Alignment(matcher.ratio() if a or b else 1.0, differences, frozenset(a) & frozenset(b), ends_differ)


def find_contrast(old_text: str, new_text: str, min_alignment: float) -> Contrast | None:
    """The contrasting slot of two texts that are about the same thing, or None.

    Texts that align less than `min_alignment` (difflib ratio, 0-1) only contrast as one proposition
    under another modality (modal_contrast) or the poles of a scale in another word order
    (unordered_polar_contrast). Otherwise, in order:
      negation - one text negates the frame and the other does not ("may include" / "must not
                 include"), the words aligning at least NEGATION_MIN_ALIGNMENT;
      antonym  - a polar pair anywhere ("high"/"low", "newest"/"oldest", "optional"/"mandatory");
      modality - one proposition required, forbidden or open on either side;
    then, unless find_distinction says the two are about different objects or measures, in each
    differing span:
      number   - a number (with its unit, dates, versions, times) on one side of a difference and a
                 different one on the other ("25 MB" / "10 MB", "Postgres 15/16");
      antonym  - two members of one group of mutually exclusive values ("client"/"server",
                 "Friday"/"Monday", "email"/"SMS");
      name     - each side holds a capitalised name or a code-like identifier the other lacks
                 ("Redis"/"Memcached", "us-east-1"/"eu-west-1").
    Last, reordered poles; and when none of these applies, a stated design property and a statement
    that breaks it (property_contrast), however differently the two are worded."""
    return _frame_contrast(old_text, new_text, min_alignment) or property_contrast(old_text, new_text)


def _frame_contrast(old_text: str, new_text: str, min_alignment: float) -> Contrast | None:
    """find_contrast's word-by-word comparison (everything but the property lexicon)."""
    alignment = align(old_text, new_text)
    if alignment.ratio < min_alignment:
        return modal_contrast(old_text, new_text) or unordered_polar_contrast(old_text, new_text)
    old_neg, new_neg = negation_count(old_text) % 2, negation_count(new_text) % 2
    if old_neg != new_neg and alignment.ratio >= NEGATION_MIN_ALIGNMENT:
        return Contrast("negation", "negated" if old_neg else "affirmed", "negated" if new_neg else "affirmed")
    polar = polar_contrast(alignment) or modal_contrast(old_text, new_text)
    if polar is not None:
        return polar
    if find_distinction(old_text, new_text, min_alignment) is not None:
        return None  # the same frame about a different object or measure: a different item
    old_names, new_names = _proper_nouns(old_text), _proper_nouns(new_text)
    for old_span, new_span in alignment.differences:
        old_numbers = [t for t in old_span if _NUMERIC.match(t)]
        new_numbers = [t for t in new_span if _NUMERIC.match(t)]
        if old_numbers and new_numbers and set(old_numbers) != set(new_numbers):
            return Contrast("number", " ".join(old_span), " ".join(new_span))
        for group in _ANTONYM_GROUPS:
            old_hit = group.intersection(old_span) - set(new_span)
            new_hit = group.intersection(new_span) - set(old_span)
            if old_hit and new_hit:
                return Contrast("antonym", sorted(old_hit)[0], sorted(new_hit)[0])
        if _bare_number(old_span, new_span) or _bare_number(new_span, old_span):
            return Contrast("number", " ".join(old_span) or "1", " ".join(new_span) or "1")
        old_ids = {t for t in old_span if _is_identifier(t)} - alignment.common
        new_ids = {t for t in new_span if _is_identifier(t)} - alignment.common
        if old_ids and new_ids:
            return Contrast("name", " ".join(sorted(old_ids)), " ".join(sorted(new_ids)))
        old_named = old_names.intersection(old_span) - alignment.common
        new_named = new_names.intersection(new_span) - alignment.common
        if old_named and new_named:
            return Contrast("name", " ".join(sorted(old_named)), " ".join(sorted(new_named)))
    return unordered_polar_contrast(old_text, new_text)


# --------------------------------------------------------------------------- properties and violations

_PROPERTIES: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...] = tuple(
    (name, re.compile(prop), re.compile(violation)) for name, prop, violation in PROPERTY_VIOLATIONS)
_NEGATED_BEFORE = re.compile(r"\b(?:not|no|never|nor|neither|without|cannot|isn't|aren't|doesn't|don't|won't|"
                             r"no longer|nothing|none)\b[^,;:.?!]*$")
SUBJECT_OVERLAP = 0.5  # share of the stating text's other words the breaking text must hold
_UNIVERSAL_SUBJECT = re.compile(r"\b(?:every|all|each|any|no)\b")


def _other_subject(stating_text: str, breaking_text: str, shared: set[str]) -> bool:
    """Whether a shared noun carries a different modifier on each side ("the checkout service" / "the
    search service"): two subjects, unless the stating side speaks of every one ("every pipeline step").
    A modifier is one content word between a determiner (or the start) and the noun."""
    if _UNIVERSAL_SUBJECT.search(normalize_text(stating_text)):
        return False
    sides = (_words(stating_text), _words(breaking_text))
    for token in shared:
        modifiers = [_modifier_of(words, token) for words in sides]
        if all(m is not None and m not in shared for m in modifiers) and modifiers[0] != modifiers[1]:
            return True
    return False


_DETERMINERS = frozenset("a an the this that these those our your their its his her my each every".split())


def _modifier_of(words: Sequence[str], token: str) -> str | None:
    if token not in words:
        return None
    index = words.index(token)
    if index == 0 or words[index - 1] in _FUNCTION_WORDS:
        return None
    return words[index - 1] if index == 1 or words[index - 2] in _DETERMINERS else None


def _subject_words(text: str) -> set[str]:
    """Content tokens that can name a subject: prepositions and particles left out ("between", "in")."""
    return {token for token in content_tokens(text) if token not in _FUNCTION_WORDS and token not in _NO_SUBJECT}


# Particles and light verbs: shared, they say nothing about sharing a subject ("keep ... in").
_NO_SUBJECT = frozenset(_stem(w) for w in """in out on off up down before after keep use make have get give run put
take set go do allow need ensure""".split())


def _affirmed(pattern: re.Pattern[str], normal: str) -> re.Match[str] | None:
    """The first match of `pattern` in `normal` that no negation before it in its clause takes back."""
    for match in pattern.finditer(normal):
        if not _NEGATED_BEFORE.search(normal[:match.start()]):
            return match
    return None


@dataclasses.dataclass(frozen=True)
class _PropertyMarks:
    """What one text says about one property: the span stating it (affirmed), whether it names it at all,
    the first affirmed span breaking it, and every span breaking it."""

    said: tuple[int, int] | None
    names: bool
    broken: tuple[int, int] | None
    violations: tuple[tuple[int, int], ...]


@functools.lru_cache(maxsize=8192)
def _property_marks(normal: str) -> Mapping[str, _PropertyMarks]:
    """Each property the normalised text states or breaks, read once per text (a text is compared with
    many items, most of which say nothing about any property)."""
    marks: dict[str, _PropertyMarks] = {}
    for name, prop, violation in _PROPERTIES:
        said, broken = _affirmed(prop, normal), _affirmed(violation, normal)
        if said is not None or broken is not None:
            marks[name] = _PropertyMarks(said.span() if said else None, prop.search(normal) is not None,
                                         broken.span() if broken else None,
                                         tuple(m.span() for m in violation.finditer(normal)))
    return marks


def property_contrast(old_text: str, new_text: str) -> Contrast | None:
    """One text states a design property of something and the other describes behaviour that breaks
    it (reconcile_lexicon.PROPERTY_VIOLATIONS: "the service is stateless" / "keeps each cart in process
    memory between requests"), or None. The violating text must not state the property itself, neither
    side's match may be negated in its clause, the two must share at least SUBJECT_OVERLAP of the
    stating text's other words (outside its property, particles and light verbs left out), and no
    shared noun may carry another modifier on each side (they speak of one subject)."""
    old, new = normalize_text(old_text), normalize_text(new_text)
    old_marks, new_marks = _property_marks(old), _property_marks(new)
    for name in [name for name in old_marks if name in new_marks]:
        for stating, breaking, flipped in ((old, new, False), (new, old, True)):
            stated, broke = _property_marks(stating)[name], _property_marks(breaking)[name]
            if stated.said is None or broke.names or broke.broken is None:
                continue
            (s1, s2), (b1, b2) = stated.said, broke.broken
            if any(end <= s1 or start >= s2 for start, end in stated.violations):
                continue  # the stating text also breaks its property elsewhere: no one-sided claim
            rest = _subject_words(stating[:s1] + " , " + stating[s2:])
            shared = rest & _subject_words(breaking)
            if not shared or len(shared) < SUBJECT_OVERLAP * len(rest) \
                    or _other_subject(stating, breaking, shared):
                continue
            evidence = (f"{name}: {stating[s1:s2].strip()}", f"violated: {breaking[b1:b2].strip()}")
            return Contrast("property", *(evidence[::-1] if flipped else evidence))
    return None


# Deontic modality, said by its markers: what a rule requires, forbids or leaves open. Read on the
# lowercase text in this order (a forbidding phrase holds a requiring or permitting word).
_MODALITIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(pattern)) for name, pattern in (
    ("forbidden", r"\b(?:must|may|can|shall|should) ?not\b|\bcannot\b|\bcan't\b|\bmustn't\b|\bnot (?:allowed|permitted)\b"
                  r"|\b(?:forbidden|prohibited|banned|never)\b"),
    ("required", r"\b(?:must|required|requires?|mandatory|compulsory|obligatory|has to|have to|needs? to|always)\b"),
    ("open", r"\b(?:may|can|optional|allowed|permitted|voluntary)\b"),
))
_MODAL_WORDS = frozenset(_stem(w) for w in """must may can cannot shall should not required require requires mandatory
compulsory obligatory has have need needs always optional allowed permitted voluntary forbidden prohibited banned
never without enabled enable""".split())
MODAL_OVERLAP = 0.6  # share of the shorter text's other content words the longer one must hold


def _modality(text: str) -> str | None:
    normal = normalize_text(text)
    return next((name for name, pattern in _MODALITIES if pattern.search(normal)), None)


def _proposition_overlap(old_text: str, new_text: str, ignored: frozenset[str]) -> float:
    """The share of the shorter text's content words (less `ignored`) that the other text holds, in any order."""
    a = set(content_tokens(old_text)) - ignored
    b = set(content_tokens(new_text)) - ignored
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def modal_contrast(old_text: str, new_text: str) -> Contrast | None:
    """One proposition under two modalities ("a library card is required to use the computers" /
    "visitors can use the computers without a library card", "2FA is optional for admins" / "admins
    must have 2FA enabled"), however reordered: each text says required, forbidden or open, they
    differ, and the shorter one's other content words are at least MODAL_OVERLAP in the other."""
    old, new = _modality(old_text), _modality(new_text)
    if old is None or new is None or old == new:
        return None
    if _proposition_overlap(old_text, new_text, _MODAL_WORDS) < MODAL_OVERLAP:
        return None
    return Contrast("modality", old, new)


def unordered_polar_contrast(old_text: str, new_text: str) -> Contrast | None:
    """The poles of one scale on the two sides of texts that say one proposition in another order
    ("smoke is used sparingly when opening the hives" / "hives are opened with plenty of smoke"): the
    shorter text's other content words are at least MODAL_OVERLAP in the other."""
    a, b = {_pole_form(t) for t in content_tokens(old_text)}, {_pole_form(t) for t in content_tokens(new_text)}
    only_old, only_new = a - b, b - a
    if not only_old or not only_new:
        return None
    if only_old & _SCALE_WORDS and only_new & _SCALE_WORDS:  # else no scale can hold both sides
        for one, other in _SCALES:
            for mine, theirs in ((one, other), (other, one)):
                old_hit, new_hit = only_old & mine, only_new & theirs
                if old_hit and new_hit and _proposition_overlap(old_text, new_text, mine | theirs) >= MODAL_OVERLAP:
                    return Contrast("antonym", sorted(old_hit)[0], sorted(new_hit)[0])
    return None


def _bare_number(span: tuple[str, ...], other: tuple[str, ...]) -> bool:
    """A count said on one side only, its unit shared: "every 2 weeks" / "every week" (one week)."""
    return not other and len(span) == 1 and bool(_NUMERIC.match(span[0])) and span[0] != "1"


# Prepositions that introduce the means, time or rate a statement chooses: "paginate *with* offsets",
# "run it *at* night", "bill *per* seat", "store amounts *as* integers". Not "for", "of", "to", "in",
# "on": those often introduce the object or attach to a noun ("an index on orders.status", "the bug in
# login"), and a different object is a different item.
_SLOT_PREPOSITIONS = frozenset({"with", "using", "via", "by", "at", "during", "through", "per", "as", "within"})


def _is_identifier(token: str) -> bool:
    """A code-like name with letters and digits ("us-east-1", "t3.large", "py312"), not a number with a unit."""
    return any(c.isalpha() for c in token) and any(c.isdigit() for c in token) and not _NUMERIC.match(token)


# --------------------------------------------------------------------------- change language

# Phrases that say an earlier item no longer holds ("stop", "drop" are too common alone: they count
# only in _NAMED_PATTERNS, where they must name what an existing item says). Wider than SUPERSESSION_TRIGGERS (which stays
# exactly the seed's list): constraints and risks change with "now", "moved to", "replaced by".
CHANGE_PHRASES: tuple[str, ...] = (
    *SUPERSESSION_TRIGGERS, "rather than", "in place of", "in favour of", "in favor of", "replace",
    "replaces", "replacing", "switch", "switches", "switching", "change", "changes", "changed",
    "changing", "moved", "migrated", "upgraded", "downgraded", "any more", "anymore", "now",
    "reverted", "postponed", "rescheduled", "pushed back", "brought forward",
    # A value reported as changed: "the minimum was raised to 110 mm", "the cap was lowered".
    "raised", "lowered", "increased", "decreased", "reduced", "extended", "shortened", "bumped", "relaxed",
    "tightened", "going forward", "off the table", "scrapped", "cancelled", "canceled", "dropped",
    # More of everyday change language (a participle among them counts only as a verb: _attributive).
    "cut to", "cut from", "cut back", "was cut", "were cut", "been cut", "down from", "up from",
    "from now on", "from today", "starting today", "as of today", "effective immediately", "henceforth",
    "revised", "amended", "updated to", "lifted", "withdrawn", "revoked", "discontinued", "abandoned",
    "ditched", "deprecated", "superseded", "overruled", "reversed", "swapped", "renamed", "has become",
    "have become", "turned into", "on second thought", "on second thoughts",
    "not any longer", "no more", "moves to", "moving to", "will now", "new plan", "plan changed",
    "changed our minds", "in lieu of", "as opposed to", "delayed", "deferred", "paused", "suspended",
    "put on hold", "on hold", "previously", "used to", "formerly", "originally", "until now",
    "takes over", "took over", "taking over", "handed over to", "phase out", "phased out", "phasing out",
    "sunset", "sunsetted", "wound down", "winding down",
)

# "change" as a noun is no change language ("at every shift change", "a change of shift"): after a
# determiner or a preposition, with at most one word between, or before "of"; "changes to"/"from" stays a
# verb, and "a change of plan" (mind, course...) says that something changed.
_CHANGE_NOUN = re.compile(r"\b(?:a|an|the|each|every|any|this|that|no|one|of|at|per|for|after|before|on|during)"
                          r"\s+(?:[a-z]+\s+)?changes?\b(?!\s+(?:to|from|of (?:plan|mind|heart|course|approach|direction))\b)"
                          r"|\bchanges?\s+of\b(?!\s+(?:plan|mind|heart|course|approach|direction)\b)")

# Verbs that end something, as stems (scrap, scrapped; cancel, cancelled).
_RETIRING_VERBS = "scrap|cancel|stop|drop|ditch|abandon|discard|retire|withdr|revok|axe|forget|scratch"
_CLAUSE_END = r"(?=$|[,;:.?!()]|\s(?:and|but|so|because|since|while|as)\s)"
# Each pattern's group "old" captures the words naming what the change retires.
_NAMED_PATTERNS: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (
    rf"\binstead of (?P<old>.+?){_CLAUSE_END}",
    rf"\brather than (?P<old>.+?){_CLAUSE_END}",
    rf"\bin place of (?P<old>.+?){_CLAUSE_END}",
    rf"\b(?:in lieu of|as opposed to) (?P<old>.+?){_CLAUSE_END}",
    # A correction that names what it is not: "store dates in UTC, not local time".
    rf"[,;] not (?!only\b|just\b|even\b|yet\b|all\b|every\b|to\b|be\b|a lot\b)(?P<old>[^,;:.?!]+?){_CLAUSE_END}",
    # "re-" verbs are the change verbs of a move: reassigned, rerouted, relocated, rebooked.
    r"\b(?:switch\w*|mov\w*|migrat\w*|upgrad\w*|downgrad\w*|chang\w*|went|go|going|port\w*|re[a-z]{3,}|"
    r"rais\w*|lower\w*|increas\w*|decreas\w*|extend\w*|shorten\w*|cut|bump\w*|push\w*|brought|bring\w*|"
    r"shift\w*|drop\w*|tighten\w*|relax\w*)\b"
    r"(?:\s[^,;:.?!]*?)?\sfrom (?P<old>.+?) to\b",
    r"\b(?:switch\w*|mov\w*|migrat\w*|shift\w*|tak\w*)\b(?:\s[^,;:.?!]*?)?\soff (?P<old>.+?) (?:onto|to)\b",
    # Retire-and-replace in two clauses: "Scrap the helicopter; the team goes up on foot", "Stop the
    # amoxicillin and treat with doxycycline", "Repaint it grey; blue is dropped". The verb retires
    # only when another clause follows (or precedes) it: alone, "stop the server before the backup"
    # is an action like any other.
    rf"(?:^|[,;:.?!] )(?:{_RETIRING_VERBS})\w* (?P<old>[^,;:.?!]+?)(?=[,;:.?!] \S|\s(?:and|but|then) \S)",
    rf"[,;:.?!] (?P<old>[^,;:.?!]+?) (?:is|are|was|were|has been|have been|gets|got) (?:{_RETIRING_VERBS})\w*\b",
    r"\breplac\w* (?!by\b|with\b)(?P<old>.+?) (?:with|by)\b",
    r"(?:^|[,;:.?!] )(?P<old>[^,;:.?!]+?) (?:is|are|was|were|has been|have been|got|gets) replaced\b",
    rf"\breplaced (?!by\b|with\b)(?P<old>.+?){_CLAUSE_END}",
    r"(?:^|[,;:.?!] )(?P<old>[^,;:.?!]*\bno longer\b[^,;:.?!]*)",
    rf"\b(?:stop(?:ped)? using|drop(?:ped)?|ditch(?:ed)?) (?!for\b|to\b|by\b|in\b|from\b|off\b|of\b)(?P<old>.+?){_CLAUSE_END}",
    r"(?:^|[,;:.?!] )(?P<old>[^,;:.?!]+?)\s(?:any ?more|(?:is|are) out(?! of\b)|was wrong)\b",
    r"(?:^|[,;:.?!] )(?P<old>[^,;:.?!]+?)\s(?:is|are|was|were) off the table\b",
))


# A past participle of a change verb also modifies nouns ("increased latency", "the cancelled orders",
# "risk of dropped packets"): there it names a state, not a change. Used attributively when a content
# word follows it and it opens its clause or follows a determiner, a preposition or a conjunction;
# "traffic increased", "we dropped the idea", "reduced to 50 items", "was cancelled" stay changes.
_PARTICIPLES = frozenset(p for p in CHANGE_PHRASES if " " not in p and p.endswith("ed"))
_ATTRIBUTIVE_BEFORE = frozenset("""
a an the this that these those some any no each every all its their our your his her my of for with
without by from in on at to into under over about via due and or but nor than more less most least
very highly heavily slightly
""".split())
_NOT_A_NOUN_AFTER = frozenset("""
to from by until till in on at into onto for with back forward up down off out away over again now
since and or but the a an this that these those its their our his her my your it them him us me
""".split())


def _attributive(normal: str, start: int, end: int) -> bool:
    """Whether the participle at normal[start:end] modifies the noun after it (see _PARTICIPLES)."""
    after = re.match(r"\s+([a-z][a-z'-]*)", normal[end:])
    if after is None or after.group(1) in _NOT_A_NOUN_AFTER or after.group(1).endswith("ly"):
        return False
    before = re.search(r"(?:^|([,;:.?!()])|([a-z0-9'-]+))\s*$", normal[:start])
    return before is None or before.group(2) is None or before.group(2) in _ATTRIBUTIVE_BEFORE


@functools.lru_cache(maxsize=8192)  # asked of every stored item's text for each candidate
def change_phrase(text: str) -> str | None:
    """The first of CHANGE_PHRASES the text contains as words, or None. Bounds are folded first:
    "no longer than 45 minutes" is a limit, not a change; a participle that modifies a noun
    ("increased latency") is not one either."""
    normal = _CHANGE_NOUN.sub(" ", canonical_text(normalize_text(text)))
    for phrase in CHANGE_PHRASES:
        for match in re.finditer(rf"\b{re.escape(phrase)}\b", normal):
            if phrase not in _PARTICIPLES or not _attributive(normal, match.start(), match.end()):
                return phrase
    return None


def named_replacements(text: str) -> list[str]:
    """The phrases a change names as retired, in order: "Use Memcached instead of Redis" ->
    ["redis"]; "switch deployment from ECS to EKS" -> ["ecs"]; "Node 18 is no longer
    supported" -> ["node 18 is no longer supported"]. Empty when the text names nothing.
    Values and bounds are in canonical form (see canonical_text)."""
    normal = canonical_text(normalize_text(text))
    found: list[str] = []
    for pattern in _NAMED_PATTERNS:
        for match in pattern.finditer(normal):
            phrase = match.group("old").strip()
            if phrase and phrase not in found:
                found.append(phrase)
    return found


def retired_tokens(text: str) -> frozenset[str]:
    """The content tokens of everything the text names as retired (see named_replacements)."""
    return frozenset(token for phrase in named_replacements(text) for token in content_tokens(phrase))


def named_overlap(named: Sequence[str], old_text: str) -> tuple[str, ...]:
    """The content tokens of the named phrases that the old item's text says: non-empty means
    the change names something the old item holds. Words the old item itself names as retired
    ("... instead of Redis") do not count: a restatement does not retire its own restatement."""
    old_tokens = set(content_tokens(old_text)) - retired_tokens(old_text)
    hits: list[str] = []
    for phrase in named:
        for token in content_tokens(phrase):
            if token in old_tokens and token not in hits and token not in _CHANGE_WORDS:
                hits.append(token)
    return tuple(hits)


# Words of the change itself are not what it names ("no longer supported": "support" is kept).
_CHANGE_WORDS = frozenset(_stem(w) for w in ("longer", "replaced", "switched", "moved", "changed", "instead"))


# --------------------------------------------------------------------------- polarity and slot roles

_POLES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(_stem(w) for w in a.split()), frozenset(_stem(w) for w in b.split())) for a, b in POLAR_SCALES)
_POLE_WORDS: frozenset[str] = frozenset(w for pair in _POLES for pole in pair for w in pole)


def _pole_form(token: str) -> str:
    """A comparative or superlative folded to its pole when that pole is a scale word ("newest" ->
    new, "bigger" -> big, "earlier" -> early); any other token unchanged."""
    if token in _POLE_WORDS:
        return token
    for suffix in ("est", "er"):
        if token.endswith(suffix) and len(token) > len(suffix) + 1:
            root = token[: -len(suffix)]
            for form in (root, root + "e", root[:-1] + "y" if root.endswith("i") else root,
                         root[:-1] if len(root) > 2 and root[-1] == root[-2] else root):
                if _stem(form) in _POLE_WORDS:
                    return _stem(form)
    return token


# Every scale unordered_polar_contrast looks for: the poles, and each rival set against itself.
_SCALES = list(_POLES)
_SCALE_WORDS = frozenset(word for one, other in _SCALES for word in one | other)


def polar_contrast(alignment: Alignment) -> Contrast | None:
    """The first difference of an alignment that puts the two poles of one scale on its two sides."""
    for old_span, new_span in alignment.differences:
        old_forms = {_pole_form(t) for t in old_span} - set(new_span)
        new_forms = {_pole_form(t) for t in new_span} - set(old_span)
        for one, other in _POLES:
            for mine, theirs in ((one, other), (other, one)):
                if old_forms & mine and new_forms & theirs:
                    return Contrast("antonym", sorted(old_forms & mine)[0], sorted(new_forms & theirs)[0])
    return None


@dataclasses.dataclass(frozen=True)
class Distinction:
    """Why two aligned texts are about different things although their frame is the same:
      named_object - a different name (or member of a closed set) modifying the same head noun
                   that names a thing, not a property ("the Berlin attendees" / "the Madrid
                   attendees", "the March statements" / "the April statements");
      object     - the same with plain words ("the login test" / "the checkout test"): plain words
                   can be synonyms, so the caller may still merge a near-identical pair;
      designator - the same noun numbered differently ("batch 14" / "batch 15", "migration 025" / "026");
      measure    - bounds on different measures ("at most 1.2 m tall" / "at most 800 kg";
                   "R 4.2 or later" / "Python 3.10 or later")."""

    kind: str
    old_value: str
    new_value: str

    def as_evidence(self) -> dict[str, str]:
        return {"kind": self.kind, "old": self.old_value, "new": self.new_value}


# A noun after a determiner or preposition, then a number that is not a time or a quantity
# (a number followed by a unit measures something: "at minus 18 degrees" picks nothing out).
_DESIGNATED = re.compile(r"\b(?:on|for|in|of|from|to|at|the|a|an|this|that|each|every)\s+([a-z]+)\s+(\d+)\b"
                         rf"(?!\s*\S*(?:h|{'|'.join(sorted(UNIT_TOKENS))}|degrees?)\b)")


# A noun and a whole number of one or two digits that no noun follows: the number names one of them
# ("photograph room 12 of the gallery", "does screen 3 have..."); a number a noun follows counts it
# ("run 3 replicas"); longer numbers are codes, ports and years, values of a slot ("return 404").
_NUMBERED = re.compile(r"\b([a-z]+)\s+(\d{1,2})(?![.,:]?\d)(?=\s*$|[,;:.?!)]|\s+(?:" + "|".join(sorted(
    {"of", "in", "on", "at", "to", "for", "from", "with", "and", "or", "is", "are", "was", "were", "has", "have",
     "had", "does", "do", "will", "should", "must", "can", "may"})) + r")\b)")


def _designators(text: str) -> dict[str, str]:
    """Lowercase nouns followed by a number that picks one of them out ("on batch 14", "for step 3",
    "photograph room 12 of the gallery")."""
    canonical = canonical_text(normalize_text(text))
    found: dict[str, str] = {}
    for match in (*_DESIGNATED.finditer(canonical), *_NUMBERED.finditer(canonical)):
        noun = match.group(1)
        if noun in _STOPWORDS or noun in BOUNDS or _stem(noun) in _ALL_GROUP_WORDS:
            continue
        if re.search(rf"\b{noun[0].upper()}{noun[1:]}\b", text):
            continue  # a capitalised name with a version ("Postgres 15") is a choice, not a designator
        found[_stem(noun)] = match.group(2)
    return found


def _is_value_token(token: str) -> bool:
    return bool(_NUMERIC.match(token)) or token in BOUNDS or token in UNIT_TOKENS or token == "minus" \
        or token.startswith("tz_")


def find_distinction(old_text: str, new_text: str, min_alignment: float) -> Distinction | None:
    """Whether two texts that share a frame are about different objects or measures (see
    Distinction), or None. Only texts aligning at least `min_alignment` are compared."""
    a, b = content_tokens(old_text), content_tokens(new_text)
    bounded = bool(BOUNDS & set(a)) and bool(BOUNDS & set(b))
    if bounded and {t for t in a if not _is_value_token(t)} & set(b):
        # Bounds on one subject in units of different dimensions, however worded: different limits.
        old_dims, new_dims = measured_dimensions(a), measured_dimensions(b)
        if old_dims and new_dims and not old_dims & new_dims:
            return Distinction("measure", " ".join(sorted(old_dims)), " ".join(sorted(new_dims)))
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    if (matcher.ratio() if a or b else 1.0) < min_alignment:
        return None
    ops = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    old_ids, new_ids = _designators(old_text), _designators(new_text)
    for noun in old_ids.keys() & new_ids.keys():
        if old_ids[noun] != new_ids[noun]:
            return Distinction("designator", f"{noun} {old_ids[noun]}", f"{noun} {new_ids[noun]}")
    modifiers = {(old_span, new_span): head for old_span, new_span, head, _ in _premodifier_changes(old_text, new_text)}
    object_change: Distinction | None = None
    for _, i1, i2, j1, j2 in ops:
        old_span, new_span = tuple(a[i1:i2]), tuple(b[j1:j2])
        old_words = [t for t in old_span if not _is_value_token(t)]
        new_words = [t for t in new_span if not _is_value_token(t)]
        if not old_words and not new_words:
            continue  # a value difference: compared elsewhere
        if bounded and old_words and new_words and len(old_words) < len(old_span) and len(new_words) < len(new_span):
            return Distinction("measure", " ".join(old_span), " ".join(new_span))
        head = modifiers.get((old_span, new_span))
        if head is not None and object_change is None:
            # Names and members of one closed set ("March"/"April") cannot be synonyms; plain nouns can.
            named = any(t in _ALL_GROUP_WORDS for t in (*old_span, *new_span)) \
                or bool(_proper_nouns(old_text) & set(old_span) and _proper_nouns(new_text) & set(new_span))
            object_change = Distinction("named_object" if named else "object", " ".join(old_span), " ".join(new_span))
            continue
        return None  # another kind of difference: not only a different object
    return object_change


def _is_premodifier(span: Sequence[str]) -> bool:
    return 0 < len(span) <= 2 and not any(_is_value_token(t) or t in _SLOT_PREPOSITIONS for t in span)


# Words that end a noun phrase or introduce another: a span before one of them modifies no head.
_FUNCTION_WORDS = _STOPWORDS | _NEGATIONS | frozenset("""
in on over under between during after before across within without outside inside around through
near behind beside beyond since until till toward towards upon against among along like unlike
using throughout
""".split())
_COPULAS = frozenset({"is", "are", "was", "were", "be", "been", "being"})


@functools.lru_cache(maxsize=8192)
def _words(text: str) -> tuple[str, ...]:
    """Every word of the canonical text, stemmed the same way as content_tokens (function words kept)."""
    return tuple(word if word in _FUNCTION_WORDS else _canonical_token(_NUMBER_WORDS.get(word, word))
                 for word in _split_words(normalize_text(_disambiguate(text))))


def _premodifier_changes(old_text: str, new_text: str) -> list[tuple[tuple[str, ...], tuple[str, ...], str, str]]:
    """Replaced spans of one or two content words directly before a noun both texts share (their head),
    in the full word sequence: (old span, new span, head, the word before the span past articles or "").
    A span introduced by a preposition of means,
    time or rate ("by sea freight" / "by air freight") is a choice of that slot, not a modifier that
    picks out another object, and is left out."""
    a, b = _words(old_text), _words(new_text)
    changes = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "replace" or i2 >= len(a) or a[i2] in _FUNCTION_WORDS or _is_value_token(a[i2]):
            continue
        old_span, new_span = tuple(a[i1:i2]), tuple(b[j1:j2])
        if not (_is_premodifier(old_span) and _is_premodifier(new_span)):
            continue
        if any(t in _FUNCTION_WORDS for t in (*old_span, *new_span)):
            continue
        before = [t for t in a[max(0, i1 - 4):i1] if t not in ("a", "an", "the")]
        if before and before[-1] in _SLOT_PREPOSITIONS:
            continue
        if len(before) >= 2 and before[-1] in ("in", "on", "at") and before[-2] in _COPULAS:
            continue  # where something is ("is in the north region"): a choice of place
        changes.append((old_span, new_span, a[i2], before[-1] if before else ""))
    return changes


# --------------------------------------------------------------------------- paraphrase

# Verbs too light to carry a statement's meaning: "X-rays are taken" / "patients get radiographs".
_LIGHT_WORDS = frozenset(_stem(w) for w in """take taken get got gets have has had do does did make made keep kept
put give go goes happen happens our their its we us you they""".split())
PARAPHRASE_OVERLAP = 0.6  # least share of the longer text's words the other must hold


@functools.lru_cache(maxsize=8192)
def paraphrase_tokens(text: str) -> frozenset[str]:
    """The content tokens of a text with light verbs left out: what two paraphrases have in common."""
    normal = normalize_text(text)
    normal = _IZE.sub(lambda m: m.group(1) + "z", normal)  # "organise" / "organize"
    return frozenset(token for token in content_tokens(normal) if token not in _LIGHT_WORDS)


_IZE = re.compile(r"\b([a-z]{3,}i)s(?=e\b|es\b|ed\b|ing\b|ation\b|ations\b|er\b|ers\b)")


def is_paraphrase(old_text: str, new_text: str) -> str | None:
    """"words" when one text's tokens are all in the other and make at least PARAPHRASE_OVERLAP of it,
    else None. The caller checks contrasts and other objects first: this only says the words agree."""
    a, b = paraphrase_tokens(old_text), paraphrase_tokens(new_text)
    if a and b and (a <= b or b <= a) and paraphrase_overlap(old_text, new_text) >= PARAPHRASE_OVERLAP:
        return "words"
    return None


def paraphrase_overlap(old_text: str, new_text: str) -> float:
    """The share of the longer text's tokens that the other holds (0-1): 1 for the same words in another
    order, lower as either says more the other does not."""
    a, b = paraphrase_tokens(old_text), paraphrase_tokens(new_text)
    return len(a & b) / max(len(a), len(b)) if a and b else 0.0


# Scope words by the range they give a statement: two texts whose classes differ hold it over a different
# range ("only my partner" / "my partner and my mother"); words of one class are interchangeable.
_SCOPES: Mapping[str, str] = {
    **dict.fromkeys("all every each any always whole entire everyone everybody anyone".split(), "every"),
    **dict.fromkeys("only just solely exclusively except".split(), "only"),
    **dict.fromkeys("none never nobody".split(), "none"),
    "some": "some",
}


def scope_words(text: str) -> frozenset[str]:
    """The classes of scope words a text holds (only, none, some). "every" is left out: a plain statement
    is already general ("store timestamps in UTC" / "all timestamps are stored as UTC")."""
    return frozenset(_SCOPES[w] for w in _split_words(normalize_text(text)) if _SCOPES.get(w, "every") != "every")
