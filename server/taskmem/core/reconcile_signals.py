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
    ATTRIBUTE_NOUNS,
    NEGATING_PREFIXES,
    OPPOSITE_SUFFIXES,
    POLAR_SCALES,
    PROPERTY_VIOLATIONS,
    RIVAL_SETS,
    SYNONYMS,
)
from taskmem.core.reconcile_values import BOUNDS, UNIT_TOKENS, canonical_text, compare_values, measured_dimensions
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

# Different spellings of one thing: compare on the canonical name.
_ALIASES: Mapping[str, str] = {
    "postgresql": "postgres", "pg": "postgres", "psql": "postgres", "k8s": "kubernetes",
    "js": "javascript", "ts": "typescript", "mongodb": "mongo", "golang": "go",
    "certs": "certificate", "cert": "certificate", "certificates": "certificate",
    "repo": "repository", "repos": "repository", "repositories": "repository",
    "db": "database", "dbs": "database", "databases": "database", "config": "configuration",
    "docs": "documentation", "ms": "millisecond", "milliseconds": "millisecond",
    "sec": "second", "secs": "second", "seconds": "second", "mins": "minute", "minutes": "minute",
    "hrs": "hour", "hours": "hour", "days": "day", "weeks": "week", "months": "month",
    "gb": "gigabyte", "mb": "megabyte", "kb": "kilobyte", "ui": "interface",
    "prod": "production", "env": "environment", "auth": "authentication", "ie": "internet explorer",
}

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
    if word in _ALIASES:
        return _ALIASES[word]
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
    word = _ALIASES.get(word, word)
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

    Texts that align less than `min_alignment` (difflib ratio, 0-1) only contrast as one choice slot,
    one subject's value (subject_value), one proposition under another modality or scope
    (modal_contrast, scope_contrast) or the poles of a scale in another word order
    (unordered_polar_contrast). Otherwise, in order:
      negation - one text negates the frame and the other does not ("may include" / "must not
                 include"), the words aligning at least NEGATION_MIN_ALIGNMENT;
      number   - a number (with its unit, dates, versions, times) appears on one side of a
                 difference and a different one on the other ("25 MB" / "10 MB", "Postgres 15/16");
      antonym  - the differing words hold two members of one group of mutually exclusive values
                 ("client"/"server", "Friday"/"Monday", "email"/"SMS", "sync"/"async");
      name     - each side of a difference holds a capitalised name the other lacks
                 ("Redis"/"Memcached", "Rust"/"Go", "Europe"/"US"), or a code-like identifier
                 with letters and digits ("us-east-1"/"eu-west-1", "t3.large"/"m5.xlarge").
    Before those (after negation): a polar pair anywhere ("high"/"low", "newest"/"oldest",
    "optional"/"mandatory", "stateful"/"stateless") is an antonym contrast, and so are two members
    of a set of rival values (RIVAL_SETS) unless they modify a shared noun outside an adjunct; then
    a modality or scope contrast; then one predicate of two subjects has no contrast; then a pair
    that find_distinction says is about different objects has none, unless its last adjunct holds
    rival values (adjunct_slot) and the distinction is not a measure or designator; then the values
    (canonical_text: times, time zones, units, money) are compared: another time zone, the same
    clock times in another order (a window and its complement), another amount of one dimension.
    Differences in plain nouns ("login test" / "checkout test") are not contrasts: they name a
    different object, which is a different item. Last, the adjunct choice and reordered poles; and
    when none of these applies, a stated design property and a statement that breaks it
    (property_contrast), however differently the two are worded."""
    return _frame_contrast(old_text, new_text, min_alignment) or property_contrast(old_text, new_text)


def _frame_contrast(old_text: str, new_text: str, min_alignment: float) -> Contrast | None:
    """find_contrast's word-by-word comparison (everything but the property lexicon)."""
    alignment = align(old_text, new_text)
    if alignment.ratio < min_alignment:
        # A short frame with a longer choice aligns poorly; so does one subject's value said in more words.
        return choice_slot(old_text, new_text) or subject_value(old_text, new_text) \
            or modal_contrast(old_text, new_text) or scope_contrast(old_text, new_text) \
            or unordered_polar_contrast(old_text, new_text)
    old_neg, new_neg = negation_count(old_text) % 2, negation_count(new_text) % 2
    if old_neg != new_neg and alignment.ratio >= NEGATION_MIN_ALIGNMENT:
        return Contrast("negation", "negated" if old_neg else "affirmed", "negated" if new_neg else "affirmed")
    rival = rival_contrast(alignment)
    if rival is not None and _picks_an_object(old_text, new_text, rival.old_value, rival.new_value):
        rival = None
    polar = polar_contrast(alignment) or rival or modal_contrast(old_text, new_text) \
        or scope_contrast(old_text, new_text)
    if polar is not None:
        return polar
    if different_subject(old_text, new_text):
        return None
    # Rival values of the last adjunct: a contrast even when the slot names things (a room, a city),
    # which would otherwise read as another object; the kinds below say more when they apply.
    slot = adjunct_slot(old_text, new_text)
    adjunct = slot if isinstance(slot, Contrast) else None
    distinction = find_distinction(old_text, new_text, min_alignment)
    if distinction is not None and (adjunct is None or distinction.kind in ("measure", "designator")):
        return None  # the same frame about a different object or measure: a different item
    values = compare_values(content_tokens(old_text), content_tokens(new_text))
    if values is not None:
        return Contrast("number" if values.kind == "value" else values.kind, values.old_value, values.new_value)
    for old_span, new_span, head, _ in _premodifier_changes(old_text, new_text):
        if head in _ATTRIBUTE_HEADS:
            return Contrast("choice", " ".join((*old_span, head)), " ".join((*new_span, head)))
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
    return choice_slot(old_text, new_text) or adjunct or unordered_polar_contrast(old_text, new_text)


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
    """The poles of one scale, or two members of one set of rival values, on the two sides of texts
    that say one proposition in another order ("smoke is used sparingly when opening the hives" /
    "hives are opened with plenty of smoke"; "pull requests are squash-merged" / "... merged with a
    merge commit"), or a word and its opposite by form ("made from unpasteurised milk" / "our brie is
    made from pasteurised milk"): the shorter text's other content words are at least MODAL_OVERLAP in
    the other."""
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
    # A word and its opposite by form ("unpasteurised" / "pasteurised", "stateful" / "stateless").
    for x in sorted(only_old):
        for y in sorted(only_new):
            if _opposite_by_form(x, y) and _proposition_overlap(old_text, new_text, frozenset({x, y})) >= MODAL_OVERLAP:
                return Contrast("antonym", x, y)
    return None


# Who a rule covers: everyone of a kind, or only some ("any developer may toggle flags" / "only the
# release manager may toggle flags").
_UNIVERSAL = re.compile(r"\b(?:any|every|all|anyone|anybody|everyone|everybody)\b")
_RESTRICTED = re.compile(r"\b(?:only|solely|exclusively)\b")


def scope_contrast(old_text: str, new_text: str) -> Contrast | None:
    """One proposition said of everyone on one side and of only some on the other, or None."""
    old, new = normalize_text(old_text), normalize_text(new_text)
    for x, y, names in ((old, new, ("all", "only")), (new, old, ("only", "all"))):
        if _UNIVERSAL.search(x) and not _RESTRICTED.search(x) and _RESTRICTED.search(y) and not _UNIVERSAL.search(y):
            if _proposition_overlap(old_text, new_text, frozenset()) >= MODAL_OVERLAP:
                return Contrast("scope", *names)
    return None


SUBJECT_WORDS = 2  # leading content words that name what a statement is about


def subject_value(old_text: str, new_text: str) -> Contrast | None:
    """Two statements about one subject (their first SUBJECT_WORDS content words are the same) that
    state another value of one dimension however the rest is worded ("migrations run only between
    01:00 and 05:00" / "migrations run only during office hours, 09:00 to 17:00"), or None."""
    a, b = content_tokens(old_text), content_tokens(new_text)
    if len(a) <= SUBJECT_WORDS or a[:SUBJECT_WORDS] != b[:SUBJECT_WORDS] \
            or any(_is_value_token(t) for t in a[:SUBJECT_WORDS]):
        return None
    values = compare_values(a, b)
    if values is None:
        return None
    return Contrast("number" if values.kind == "value" else values.kind, values.old_value, values.new_value)


def different_subject(old_text: str, new_text: str) -> bool:
    """Whether two statements differ first in the words they open with, both sides holding words
    that are not values, and somewhere else too: the same predicate about two subjects ("children's
    books can be borrowed for three weeks" / "DVDs ... for one week") says nothing against the other."""
    a, b = content_tokens(old_text), content_tokens(new_text)
    ops = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(ops) < 2 or ops[0][0] != "replace" or ops[0][1] != 0 or ops[0][3] != 0:
        return False
    _, i1, i2, j1, j2 = ops[0]
    return any(not _is_value_token(t) for t in a[i1:i2]) and any(not _is_value_token(t) for t in b[j1:j2])


def changed_value(old_text: str, new_text: str) -> Contrast | None:
    """A quantity both texts give in the same unit with different numbers ("capped at 100 items per
    page" / "the cap changed to 500 items"), however differently the rest is worded: with change
    language, the new text resets that value."""
    def quantities(text: str) -> dict[str, str]:
        tokens = content_tokens(text)
        return {unit: number for number, unit in zip(tokens, tokens[1:])
                if _NUMERIC.match(number) and not _NUMERIC.match(unit)}
    old, new = quantities(old_text), quantities(new_text)
    for unit, number in new.items():
        if unit in old and old[unit] != number:
            return Contrast("number", f"{old[unit]} {unit}", f"{number} {unit}")
    return None


def _bare_number(span: tuple[str, ...], other: tuple[str, ...]) -> bool:
    """A count said on one side only, its unit shared: "every 2 weeks" / "every week" (one week)."""
    return not other and len(span) == 1 and bool(_NUMERIC.match(span[0])) and span[0] != "1"


# Prepositions that introduce the means, time or rate a statement chooses: "paginate *with* offsets",
# "run it *at* night", "bill *per* seat", "store amounts *as* integers". Not "for", "of", "to", "in",
# "on": those often introduce the object or attach to a noun ("an index on orders.status", "the bug in
# login"), and a different object is a different item.
_SLOT_PREPOSITIONS = frozenset({"with", "using", "via", "by", "at", "during", "through", "per", "as", "within"})


def _slot_tokens(text: str) -> list[str]:
    """content_tokens with the slot prepositions kept in place."""
    tokens = []
    for word in _split_words(normalize_text(_disambiguate(text))):
        if word in _SLOT_PREPOSITIONS:
            tokens.append(word)
        elif word not in _STOPWORDS and word not in _NEGATIONS:
            tokens.append(_stem(_NUMBER_WORDS.get(word, word)))
    return tokens


FRAME_MIN = 1


def choice_slot(old_text: str, new_text: str) -> Contrast | None:
    """Two statements of one frame that choose differently in one slot introduced by a preposition
    of means, time or rate ("paginate with offsets" / "with cursors", "during business hours" /
    "at night"): alternatives for the same choice, so a contrast. One replaced span of at most three
    words, everything else equal, and a frame of at least FRAME_MIN equal words besides the preposition."""
    a, b = _slot_tokens(old_text), _slot_tokens(new_text)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    ops = matcher.get_opcodes()
    changes = [op for op in ops if op[0] != "equal"]
    frame = [t for tag, i1, i2, _, _ in ops if tag == "equal" for t in a[i1:i2] if t not in _SLOT_PREPOSITIONS]
    if len(changes) != 1 or changes[0][0] != "replace" or len(frame) < FRAME_MIN:
        return None
    _, i1, i2, j1, j2 = changes[0]
    old_span, new_span = a[i1:i2], b[j1:j2]
    introduced = i1 > 0 and a[i1 - 1] in _SLOT_PREPOSITIONS
    both_start = old_span[0] in _SLOT_PREPOSITIONS and new_span[0] in _SLOT_PREPOSITIONS
    if not (introduced or both_start) or len(old_span) > 3 or len(new_span) > 3:
        return None
    return Contrast("choice", " ".join(old_span), " ".join(new_span))


# Prepositions that open an adjunct (where, when, how, at what rate, by when), by the question they
# answer. Two statements of one frame whose last slot is replaced under prepositions of one class
# choose differently for that slot ("file it before departure" / "on arrival", "render it on the
# server" / "in the browser"); under two classes they say different things about one frame
# ("pay per word" / "within 30 days"). "for" and "to" are left out: they name a recipient or a
# purpose, a different object as often as a different value.
_ADJUNCT_CLASSES: Mapping[str, str] = {
    **dict.fromkeys(("in", "on", "at", "into", "onto", "inside", "before", "after", "during", "until", "till",
                     "across", "throughout", "near", "behind", "under", "over"), "where_when"),
    **dict.fromkeys(("with", "using", "via", "by", "through", "as", "without"), "means"),
    "per": "rate", "within": "bound", "atmost": "bound", "atleast": "bound",
}
_ADJUNCT_FRAME_MIN = 2  # content words of the shared frame before the slot: a verb and its object at least
_ADJUNCT_SPAN_MAX = 4


def adjunct_slot(old_text: str, new_text: str) -> Contrast | Distinction | None:
    """Two statements that share their frame word for word and differ only in their last adjunct, or
    None. The frame before the slot holds at least _ADJUNCT_FRAME_MIN content words; each side's slot
    is one prepositional phrase of at most _ADJUNCT_SPAN_MAX words (shared words after it are function
    words only: a shared noun after the slot would make the difference a modifier of that noun, a
    different object), and the two slots share no content word (a refined slot is not a rival one).
    Prepositions of one class (_ADJUNCT_CLASSES): a Contrast("choice"), rival values for the slot.
    Of two classes: a Distinction("slot"), two compatible statements about one frame."""
    a, b = _words(old_text), _words(new_text)
    changes = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not changes:
        return None
    # The slot runs from the first difference to the last ("at the head office" / "in the park").
    i1, j1, i2, j2 = changes[0][1], changes[0][3], changes[-1][2], changes[-1][4]
    if i1 == i2 or j1 == j2 or any(word not in _FUNCTION_WORDS for word in a[i2:]):
        return None
    old_start, new_start = _adjunct_start(a, i1), _adjunct_start(b, j1)
    if old_start is None or new_start is None:
        return None
    old_intro, old_span = a[old_start], a[old_start + 1:i2]
    new_intro, new_span = b[new_start], b[new_start + 1:j2]
    frame = [w for w in a[:i1] if w not in _FUNCTION_WORDS and w not in old_span]
    old_content = {w for w in a[i1:i2] if w not in _FUNCTION_WORDS and w not in _ADJUNCT_CLASSES}
    new_content = {w for w in b[j1:j2] if w not in _FUNCTION_WORDS and w not in _ADJUNCT_CLASSES}
    if (len(frame) < _ADJUNCT_FRAME_MIN or not old_content or not new_content or old_content & new_content
            or len(old_span) > _ADJUNCT_SPAN_MAX or len(new_span) > _ADJUNCT_SPAN_MAX):
        return None
    if any("." in w and not _NUMERIC.match(w) for w in (*old_span, *new_span)):
        return None  # a code path ("orders.status", "api.example.com") names an object, not a manner
    # Evidence in the texts' own words (the tokens are stemmed): "in vials" / "in syringes".
    old_value = " ".join(_surface_words(old_text)[old_start:i2])
    new_value = " ".join(_surface_words(new_text)[new_start:j2])
    if _ADJUNCT_CLASSES[old_intro] == _ADJUNCT_CLASSES[new_intro]:
        return Contrast("choice", old_value, new_value)
    return Distinction("slot", old_value, new_value)


def _adjunct_start(words: Sequence[str], start: int) -> int | None:
    """The index of the preposition that opens a replaced span starting at words[start]: its first
    word, or the word just before it past articles; None when no adjunct preposition does."""
    if start < len(words) and words[start] in _ADJUNCT_CLASSES:
        return start
    before = start - 1
    while before >= 0 and words[before] in ("a", "an", "the"):
        before -= 1
    return before if before >= 0 and words[before] in _ADJUNCT_CLASSES else None


def _surface_words(text: str) -> tuple[str, ...]:
    """The words _words stems, as written (lowercase), index for index."""
    return _split_words(normalize_text(_disambiguate(text)))


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
_ATTRIBUTE_HEADS: frozenset[str] = frozenset(_stem(w) for w in ATTRIBUTE_NOUNS)


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


def _opposite_by_form(a: str, b: str) -> bool:
    """One word is the other with a negating prefix, or they swap opposite suffixes
    ("encrypted"/"unencrypted", "stateful"/"stateless")."""
    for x, y in ((a, b), (b, a)):
        if len(x) >= 4 and any(y == prefix + x for prefix in NEGATING_PREFIXES):
            return True
        for one, other in OPPOSITE_SUFFIXES:
            if x.endswith(one) and y.endswith(other) and x[: -len(one)] == y[: -len(other)] and len(x) > len(one) + 2:
                return True
        # "wireless"/"wired", "cordless"/"corded", "paperless"/"paper": the stem with and without -less.
        if x.endswith("less") and len(x) > 7 and _stem(x[:-4]) == y:
            return True
    return False


_RIVALS: tuple[frozenset[str], ...] = tuple(
    frozenset(tokens[0] for tokens in (content_tokens(member) for member in group.split()) if len(tokens) == 1)
    for group in RIVAL_SETS)


# Every scale unordered_polar_contrast looks for: the poles, and each rival set against itself.
_SCALES = [*_POLES, *((group, group) for group in _RIVALS)]
_SCALE_WORDS = frozenset(word for one, other in _SCALES for word in one | other)


def rival_contrast(alignment: Alignment) -> Contrast | None:
    """The first difference of an alignment whose two sides hold different members of one closed set
    of rival values (reconcile_lexicon.RIVAL_SETS: "blister"/"bottle", "series"/"parallel")."""
    for old_span, new_span in alignment.differences:
        old_words, new_words = set(old_span) - set(new_span), set(new_span) - set(old_span)
        for group in _RIVALS:
            old_hit, new_hit = group & old_words, group & new_words
            if old_hit and new_hit and not old_hit & new_hit:
                return Contrast("choice", sorted(old_hit)[0], sorted(new_hit)[0])
    return None


def polar_contrast(alignment: Alignment) -> Contrast | None:
    """The first difference of an alignment that puts the two poles of one scale on its two sides."""
    for old_span, new_span in alignment.differences:
        old_forms = {_pole_form(t) for t in old_span} - set(new_span)
        new_forms = {_pole_form(t) for t in new_span} - set(old_span)
        for one, other in _POLES:
            for mine, theirs in ((one, other), (other, one)):
                if old_forms & mine and new_forms & theirs:
                    return Contrast("antonym", sorted(old_forms & mine)[0], sorted(new_forms & theirs)[0])
        for a in old_span:
            for b in new_span:
                if _opposite_by_form(a, b):
                    return Contrast("antonym", a, b)
    return None


@dataclasses.dataclass(frozen=True)
class Distinction:
    """Why two aligned texts are about different things although their frame is the same:
      named_object - a different name (or member of a closed set) modifying the same head noun
                   that names a thing, not a property ("the Berlin attendees" / "the Madrid
                   attendees", "the March statements" / "the April statements");
      object     - the same with plain words ("the login test" / "the checkout test"): plain words
                   can be synonyms, so the caller may still merge a near-identical pair;
      designator - the same noun numbered differently ("batch 14" / "batch 15");
      measure    - bounds on different measures ("at most 1.2 m tall" / "at most 800 kg";
                   "R 4.2 or later" / "Python 3.10 or later");
      slot       - the same frame with its last adjunct replaced by one that answers another
                   question ("pay the translators per word" / "within 30 days": see adjunct_slot)."""

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
    slot = adjunct_slot(old_text, new_text)
    if isinstance(slot, Distinction):
        return slot
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
        if head is not None and head not in _ATTRIBUTE_HEADS and object_change is None:
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


def _picks_an_object(old_text: str, new_text: str, old_value: str, new_value: str) -> bool:
    """Whether two rival values modify a noun both texts share that names a thing, outside an adjunct:
    then they pick out two things ("the spring campaign" / "the autumn campaign", "the gold members" /
    "the silver members"), not two values of one slot ("spell it in British English" / "American English")."""
    for old_span, new_span, head, opener in _premodifier_changes(old_text, new_text):
        if old_value in old_span and new_value in new_span and head not in _ATTRIBUTE_HEADS \
                and opener not in _ADJUNCT_CLASSES:
            return True
    return False


# --------------------------------------------------------------------------- paraphrase

_SYNONYM_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple(sorted(
    ((re.compile(rf"(?<![\w&-]){re.escape(phrase.strip())}(?![\w&-])"), canonical)
     for canonical, phrases in SYNONYMS for phrase in phrases.split(",")),
    key=lambda entry: -len(entry[0].pattern)))  # longest phrase first: "once a year" before "a year"
# Verbs too light to carry a statement's meaning: "X-rays are taken" / "patients get radiographs".
_LIGHT_WORDS = frozenset(_stem(w) for w in """take taken get got gets have has had do does did make made keep kept
put give go goes happen happens our their its we us you they""".split())
PARAPHRASE_OVERLAP = 0.6  # least share of the longer text's words the other must hold


@functools.lru_cache(maxsize=8192)
def paraphrase_tokens(text: str) -> frozenset[str]:
    """The content tokens of a text once synonyms are folded to one word (reconcile_lexicon.SYNONYMS)
    and light verbs are left out: what two paraphrases have in common."""
    normal = normalize_text(text)
    for pattern, canonical in _SYNONYM_PHRASES:
        normal = pattern.sub(canonical, normal)
    normal = _IZE.sub(lambda m: m.group(1) + "z", normal)  # "organise" / "organize"
    return frozenset(token for token in content_tokens(normal) if token not in _LIGHT_WORDS)


_IZE = re.compile(r"\b([a-z]{3,}i)s(?=e\b|es\b|ed\b|ing\b|ation\b|ations\b|er\b|ers\b)")


def is_paraphrase(old_text: str, new_text: str) -> str | None:
    """Why two texts say the same thing in other words, or None: "words" when, synonyms folded, one
    text's tokens are all in the other and make at least PARAPHRASE_OVERLAP of it; "property: <name>"
    when both state one design property of one subject. The caller checks contrasts and other objects
    first: this only says the words agree."""
    a, b = paraphrase_tokens(old_text), paraphrase_tokens(new_text)
    if a and b and (a <= b or b <= a) and paraphrase_overlap(old_text, new_text) >= PARAPHRASE_OVERLAP:
        return "words"
    name = same_property(old_text, new_text)
    return f"property: {name}" if name else None


def paraphrase_overlap(old_text: str, new_text: str) -> float:
    """The share of the longer text's folded tokens that the other holds (0-1): 1 for the same words
    in another order or other synonyms, lower as either says more the other does not."""
    a, b = paraphrase_tokens(old_text), paraphrase_tokens(new_text)
    return len(a & b) / max(len(a), len(b)) if a and b else 0.0


def same_property(old_text: str, new_text: str) -> str | None:
    """The design property both texts state of one subject ("queue consumers must be idempotent" /
    "processing a queue message twice must have no additional effect"), or None."""
    old, new = normalize_text(old_text), normalize_text(new_text)
    old_marks, new_marks = _property_marks(old), _property_marks(new)
    for name, _, _ in _PROPERTIES:
        mark_old, mark_new = old_marks.get(name), new_marks.get(name)
        if mark_old is None or mark_new is None or mark_old.said is None or mark_new.said is None \
                or mark_old.violations or mark_new.violations:
            continue
        (old_start, old_end), (new_start, new_end) = mark_old.said, mark_new.said
        rest = _subject_words(old[:old_start] + " , " + old[old_end:])
        other = _subject_words(new[:new_start] + " , " + new[new_end:])
        if rest & other and len(rest & other) >= SUBJECT_OVERLAP * min(len(rest), len(other)):
            return name
    return None


# --------------------------------------------------------------------------- questions

# What kind of answer a question asks for, read off its opening words (first match wins). "what" and
# "which" followed by a noun can ask for anything, so they have no kind.
_QUESTION_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((kind, re.compile(pattern)) for kind, pattern in (
    ("quantity", r"^(?:how (?:many|much)|what (?:number|amount|percentage|share) of)\b"),
    ("duration", r"^how long\b"),
    ("time", r"^(?:when|by when|until when|what time|what date|on which (?:day|date))\b"),
    ("place", r"^(?:where|from where)\b"),
    ("reason", r"^(?:why|how come)\b"),
    ("person", r"^(?:who|whom|whose)\b"),
    ("manner", r"^how\b"),
    ("yes/no", r"^(?:is|are|was|were|do|does|did|can|could|should|shall|will|would|has|have|had|may|might|must)\b"),
))


def question_kind(text: str) -> str | None:
    """The kind of answer a question asks for (quantity, duration, time, place, reason, person, manner,
    yes/no), or None when it is not a question or its opening does not say."""
    normal = normalize_text(text)
    if not normal.endswith("?"):
        return None
    return next((kind for kind, pattern in _QUESTION_KINDS if pattern.search(normal)), None)


def different_questions(old_text: str, new_text: str) -> tuple[str, str] | None:
    """Two questions that ask for different kinds of answer ("how many seats does screen 3 have?" /
    "does screen 3 have a wheelchair space?"): (old kind, new kind), or None."""
    old, new = question_kind(old_text), question_kind(new_text)
    return (old, new) if old and new and old != new else None
