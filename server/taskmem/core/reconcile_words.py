"""The words reconciliation reads, and only where they make a decision certain (core/reconcile's table):

- the same words: two texts whose content words are one set in one order, or one holding the other's plus
  detail with no value in it (no number, name, negation or scope word among the extra words);
- a value named as retired: "instead of X", "rather than X", "no longer X", "drop X", "forget X",
  "switch from X to", "replace X with", "X is out" - in the user's message or the candidate's own text.

Everything else two texts could share or differ in (another value, scope, subject, object, amount) is not
read here: it is asked (core/reconcile). Pure functions, no I/O.
"""

from __future__ import annotations

import dataclasses
import functools
import re

from taskmem.core.state_items import normalize_text

# Function words that carry no slot. Negations and scope words are kept out of the content words but read
# on their own: a restatement never changes them.
_STOPWORDS = frozenset("""
a an the this that these those it its is are was were be been being am do does did doing done
to of for with by at from as into onto about via per and or but so if then than too very
we us our you your they them their i me my he she his her one ones some any each every all both
should would could can may might must shall will has have had having need needs needed
let lets let's please also just still yet again there here what which who whom whose
when where why how whether
""".split())
_NEGATIONS = frozenset("not no never without none nothing cannot nor neither".split())
# Words that give a statement its range: "only my partner" / "my partner and my mother".
_SCOPE = frozenset("only solely exclusively except unless every all any always none never some most".split())
_NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "fifteen": "15", "twenty": "20",
    "thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "thousand": "1000", "twice": "2",
    "once": "1", "half": "0.5", "dozen": "12", "single": "1", "double": "2",
}
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_.+#-]*[a-z0-9+#]|[a-z0-9]")
_CONTRACTED_NOT = re.compile(r"\b(\w+)n't\b")
# A value word: a number, a version or code (letters with digits), a time.
_VALUE = re.compile(r".*\d")


def _stem(word: str) -> str:
    """A light stemmer, so that limit/limits/limited and cache/caching compare equal."""
    if not word.isalpha():
        return word
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ied"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith("ed") and not word.endswith("eed"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word[:-1] if len(word) >= 3 and word.endswith("e") else word


@functools.lru_cache(maxsize=8192)
def words(text: str) -> tuple[str, ...]:
    """Every word of a text, lowercased, "n't" spelled "not", hyphenated compounds split ("client-side")
    unless they carry a digit ("us-east-1")."""
    normal = _CONTRACTED_NOT.sub(lambda m: f"{m.group(1)} not", normalize_text(text)).replace("can not", "cannot")
    found: list[str] = []
    for raw in _TOKEN.findall(normal):
        whole = any(c.isdigit() for c in raw) and not re.fullmatch(r"\d+(?:\.\d+)?-[a-z-]+", raw)  # "us-east-1"
        found.extend([raw] if whole else [part for part in raw.split("-") if part])  # "7-round", "client-side"
    return tuple(found)


@functools.lru_cache(maxsize=8192)
def content_tokens(text: str) -> tuple[str, ...]:
    """The content words of a text in order: stemmed, number words as digits, without function words,
    negations and scope words."""
    return tuple(_stem(_NUMBER_WORDS.get(w, w)) for w in words(text)
                 if w not in _STOPWORDS and w not in _NEGATIONS and w not in _SCOPE)


@functools.lru_cache(maxsize=8192)
def _names(text: str) -> frozenset[str]:
    """Content tokens of words written with a capital anywhere but at the start: names ("Memcached", "EU")."""
    found: set[str] = set()
    for index, word in enumerate(re.findall(r"[A-Za-z][A-Za-z0-9.+#'-]*", text)):
        if index and (word[0].isupper() or any(c.isupper() for c in word[1:])):
            found.update(content_tokens(word))
    return frozenset(found)


def _modifiers(text: str) -> tuple[int, frozenset[str]]:
    """The parity of a text's negations and its scope words: a restatement keeps both."""
    all_words = words(text)
    return sum(w in _NEGATIONS for w in all_words) % 2, frozenset(w for w in all_words if w in _SCOPE)


MIN_SAME_WORDS = 2     # a restatement shares at least this many content words
MIN_SAME_SHARE = 0.5   # and they are at least this share of the longer text's content words


def same_words(old: str, new: str) -> bool:
    """The two texts say the same words, or one says the other's plus detail with no value in it: the shorter
    one's content words are all in the longer one, in the same order, and make at least MIN_SAME_SHARE of it;
    the extra words hold no number, code or name; negation and scope words are the same on both sides."""
    a, b = content_tokens(old), content_tokens(new)
    short, long_ = (a, b) if len(set(a)) <= len(set(b)) else (b, a)
    if len(set(short)) < MIN_SAME_WORDS or not set(short) <= set(long_):
        return False
    if len(set(short)) / len(set(long_)) < MIN_SAME_SHARE or _modifiers(old) != _modifiers(new):
        return False
    if retired_words(old, False) != retired_words(new, False):
        return False  # one names something as retired ("in euros rather than US dollars"): a change
    common = set(short)
    if list(dict.fromkeys(t for t in a if t in common)) != list(dict.fromkeys(t for t in b if t in common)):
        return False  # the same words in another order: "between 22:00 and 06:00" / "between 06:00 and 22:00"
    extra = set(long_) - set(short)
    if any(_VALUE.match(t) for t in extra) or extra & (_names(old) | _names(new)):
        return False
    return not _scoped(old if long_ is a else new, extra)


_PREPOSITIONS = frozenset("for on in at during from to within per by with under over after before".split())
_DETERMINERS = frozenset("the a an this that these those our their my your its his her each every all".split())


def _scoped(text: str, extra: set[str]) -> bool:
    """Whether a preposition introduces any of the extra words ("Cap uploads at 10 MB for the free tier"):
    detail that gives the statement another scope or object, not detail with no value in it."""
    previous = ""
    for word in words(text):
        token = _stem(_NUMBER_WORDS.get(word, word))
        if token in extra and previous in _PREPOSITIONS:
            return True
        if word not in _DETERMINERS:
            previous = word
    return False


# --------------------------------------------------------------------------- the user's own answer

_RETIRING = r"scrap|cancel|stop|drop|ditch|abandon|discard|retire|forget|scratch|park|skip|lose the"
_END = r"(?=$|[,;:.?!()]|\s(?:and|but|so|because|since|while|as|for now|we|i|let's|what|use|go|make|do)\s)"
_SUBJECT = r"(?:^|[,;:.?!] |\b(?:but|and|so|the|because) )(?P<old>[^,;:.?!]+?)"
# Each pattern's group "old" holds the words that name what is retired. A statement replacing a value names it
# so ("Use Memcached instead of Redis"); a speaker may also dismiss it ("Spanish can wait", "no hand quilting").
_REPLACING: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (
    rf"\b(?:instead of|rather than|in place of|in lieu of|as opposed to) (?P<old>.+?){_END}",
    rf"\bno (?:longer|more) (?!than\b)(?P<old>.+?){_END}", r"\bnot (?P<old>[^,;:.?!]+?) any ?more\b",
    r"\b(?:switch|mov|migrat|chang|go|went|shift|bump|push|cut|rais|lower|reduc|increas|extend|shorten|drop|"
    r"upgrad|downgrad|re[a-z]{3,})\w*\b(?:\s[^,;:.?!]*?)?\sfrom (?P<old>.+?) to\b",
    r"\b(?:replac|swap)\w* (?!by\b|with\b|for\b)(?P<old>.+?) (?:with|by|for)\b",
    rf"\b(?:{_RETIRING})\w* (?:the |our |that |those |using |with )?(?P<old>[^,;:.?!]+?){_END}",
    rf"[,;] not (?!only\b|just\b|even\b|yet\b|all\b|every\b|to\b|be\b|a lot\b)(?P<old>[^,;:.?!]+?){_END}",
    r"\b(?:mov|switch|get|come|migrat)\w* off (?P<old>[^,;:.?!-]+?)(?= ?[,;:.?!-]|$| (?:and|to|onto)\b)",
))
_DISMISSING: tuple[re.Pattern[str], ...] = tuple(re.compile(p) for p in (
    r"(?:^|[,;:.?!-] )no (?!more\b|less\b|longer\b|later\b|fewer\b|one\b|need\b|problem|worries\b|way\b|doubt\b)"
    r"(?P<old>[a-z][^,;:.?!-]*?)(?= ?[,;:.?!-]|$)",
    rf"{_SUBJECT}(?:'s| is| are| was| were) (?:out|off|off the table|cancel+ed|dropped|scrapped|wrong|no good|not"
    rf" an option|a no-go|too \w+|been done to death)\b",
    rf"{_SUBJECT}(?: can| will| would)(?:'t| not|n't)? (?:wait|not work|never work|work)\b",
    r"\bgot (?P<old>[^,;:.?!]+?) wrong\b",
))
# The user saying the candidate stands beside what is there ("can you also...", "... too"), or restates what
# stands ("still", "like we said"): their own answer to the question reconciliation would otherwise ask.
_ADDS = re.compile(r"\balso\b|\b(?:too|as well)(?=\s*(?:$|[,;:.?!)]))|\bone more\b|\bin addition\b|"
                   r"\badditionally\b|\bwhile (?:you're|you are|we're|we are) (?:at it|in there)\b|\bon top of that\b")
_CONFIRMS = re.compile(r"\bstill\b|\b(?:like|as) (?:we|i) (?:said|agreed|discussed|planned)\b|\bas agreed\b|"
                       r"\bstick(?:ing)? with\b|\bkeep (?:using|going)\b|\b(?:just )?to confirm\b|\bconfirmed?\b|"
                       r"\bsettled\b|\bas planned\b|\bas before\b|\breminder\b|\bremember\b|\bnot budging\b|"
                       r"\bstays?\b")


def _lower(text: str) -> str:
    """Lowercase with straight apostrophes (normalize_text drops them: "hallway's" would read "hallways")."""
    return re.sub(r"\s+", " ", text.replace("\u2019", "'").replace("\u2018", "'").lower()).strip()


def adds(message: str, retiring: bool = False) -> bool:
    """The user's message says its statement comes in addition to what is there, and (unless `retiring`)
    retires nothing."""
    return bool(_ADDS.search(_lower(message))) and (retiring or not retired_words(message))


def confirms(message: str) -> bool:
    """The user's message says what it states still stands, and retires nothing."""
    normal = _lower(message)
    return bool(_CONFIRMS.search(normal)) and not retired_words(message) and not _ADDS.search(normal)


def same_values(old: str, new: str) -> bool:
    """The two texts hold the same numbers, codes and names, and the same negation and scope words."""
    def values(text: str) -> frozenset[str]:
        return frozenset(t for t in content_tokens(text) if _VALUE.match(t)) | _names(text)
    return values(old) == values(new) and _modifiers(old) == _modifiers(new)


def same_modifiers(old: str, new: str) -> bool:
    return _modifiers(old) == _modifiers(new)


@functools.lru_cache(maxsize=8192)
def retired_words(text: str, spoken: bool = True) -> frozenset[str]:
    """The content tokens of everything a text names as retired: "Use Memcached instead of Redis" -> {redis};
    "Forget the German forms for now" -> {german, form}. Empty when it names nothing."""
    normal = _lower(text)
    patterns = (*_REPLACING, *_DISMISSING) if spoken else _REPLACING
    return frozenset(t for pattern in patterns for match in pattern.finditer(normal)
                     for t in content_tokens(match.group("old")))


@dataclasses.dataclass(frozen=True)
class Retirement:
    """What a retiring phrase names of an item: the item's words it names as retired (absent from the
    candidate) and where the phrase was (the candidate's own text or the user's message)."""

    named: tuple[str, ...]
    where: str


def names_retired(old: str, new: str, said: str, where: str, spoken: bool) -> Retirement | None:
    """Whether `said` (the user's message: `spoken`, or the candidate's own text) names a word of the old item
    that the candidate does not hold as retired, while the candidate holds a word the old item does not (it
    gives the new value). Words the old item itself names as retired do not count (a restatement of a change)."""
    new_words = set(content_tokens(new)) - retired_words(new, False)  # "Memcached instead of Redis": no Redis
    old_only = set(content_tokens(old)) - new_words - retired_words(old, False)
    new_only = new_words - set(content_tokens(old))
    named = retired_words(said, spoken) & old_only
    return Retirement(tuple(sorted(named)), where) if named and new_only else None


__all__ = ["Retirement", "adds", "confirms", "content_tokens", "names_retired", "retired_words", "same_modifiers",
           "same_values", "same_words", "words"]
