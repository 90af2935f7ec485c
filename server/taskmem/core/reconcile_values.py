"""Values, bounds and polarity written one canonical way, so two texts that state one value in
different words align, and two that state different values (or the same values in another order)
differ in a slot that can be compared.

canonical_text rewrites a normalised (lowercase) text before it is split into words:
  clock times   "02:00", "2am", "2 a.m.", "noon"            -> "0200h", "1200h"
  time zones    "UTC", "GMT", "Pacific time", "PT", "the airport's local time"  -> "tz_utc", "tz_local"...
  temperatures  "-80 °C", "minus 80 degrees Celsius"        -> "minus 80 celsius"
  money         "€180", "180 euros", "$2,000", "2000 dollars" -> "180 eur", "2000 usd"
  units         "30 kilograms", "1.2 m", "12-column"         -> "30 kg", "1.2 metre", "12 column"
  ordinals      "fifth", "third"                             -> "5th", "3rd"
  conventions   "day/month/year", "YYYY-MM-DD", "ISO 8601", "squash-merged", "merge commit",
                "half to even", "half away from zero"       -> "dmyformat", "ymdformat", "squash", "mergecommit",
                                                               "halfeven", "halfup"
  levels        "a high risk", "very unlikely"; "top priority", "after all other"
                                                             -> "likely", "unlikely"; "first", "last"
  multiples     "doubles", "tripled", "halve"                -> "2x", "3x", "0.5x"
  bounds        "at most", "no longer than", "up to", "capped at", "or less"     -> "atmost"
                "at least", "or later", "and above", "no fewer than", "minimum"  -> "atleast"
                a comparator ("more than", "past", "heavier than", "under", "below"...) becomes
                atleast/atmost, and a negation before it in the same clause flips it and is used up:
                "no interview may run past 45 minutes" -> "interview may run atmost 45 minutes".
  complements   "outside", "except", "excluding", "apart from" -> "not" (the complement of a
                window or a set is its negation: "during business hours" / "outside business hours").

value_slots reads the canonical tokens back as (dimension, value) slots, which the contrast checks
compare: same dimension and another value, the same values in another order (a window and its
reverse), or no dimension in common (bounds on different measures: a height and a weight).
Pure functions, no I/O.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Mapping, Sequence

# --------------------------------------------------------------------------- canonical text

_ORDINALS: Mapping[str, str] = {
    "third": "3rd", "fourth": "4th", "fifth": "5th", "sixth": "6th", "seventh": "7th", "eighth": "8th",
    "ninth": "9th", "tenth": "10th", "twentieth": "20th", "thirtieth": "30th",
}

# Verbs of multiplication: "traffic doubles" / "traffic triples" state other factors.
_MULTIPLES: tuple[tuple[str, str], ...] = (("doubl", "2x"), ("tripl", "3x"), ("quadrupl", "4x"), ("halv", "0.5x"))

_TIME_ZONES: tuple[tuple[str, str], ...] = (
    (r"coordinated universal time|\butc\b|\bgmt\b|\bzulu\b", "tz_utc"),
    (r"central european (?:summer )?time|\bcet\b|\bcest\b", "tz_cet"),
    (r"eastern european (?:summer )?time|\beet\b|\beest\b", "tz_eet"),
    (r"pacific (?:standard |daylight )?time|\bp[sd]t\b", "tz_pacific"),
    (r"eastern (?:standard |daylight )?time|\be[sd]t\b", "tz_eastern"),
    (r"central (?:standard |daylight )?time|\bc[sd]t\b", "tz_central"),  # not bare "ct" (a CT scan)
    (r"mountain (?:standard |daylight )?time|\bm[sd]t\b", "tz_mountain"),
    (r"(?:\bthe )?(?:\b[a-z]+'s )?\blocal time(?: zone)?", "tz_local"),
)

# Unit spellings after a number -> the canonical unit token (see _DIMENSIONS).
_UNIT_SPELLINGS: tuple[tuple[str, str], ...] = (
    (r"kilograms?|kgs?|kilos?", "kg"), (r"grams?", "gram"), (r"tonnes?|metric tons?", "tonne"),
    (r"kilometres?|kilometers?|km", "km"), (r"centimetres?|centimeters?|cm", "cm"),
    (r"millimetres?|millimeters?|mm", "mm"), (r"metres?|meters?|m(?![a-z0-9])", "metre"),
    (r"°\s?c|degrees? celsius|degrees? c\b|celsius", "celsius"), (r"°\s?f|degrees? fahrenheit|fahrenheit", "fahrenheit"),
    (r"euros?|eur\b", "eur"), (r"dollars?|usd\b", "usd"), (r"pounds sterling|gbp\b", "gbp"),
    (r"percent|per cent|%", "percent"),
)

_MAX_PHRASES = (
    r"no longer than", r"not longer than", r"no more than", r"not more than", r"no later than",
    r"not later than", r"no greater than", r"no higher than", r"no larger than", r"no bigger than",
    r"no heavier than", r"no taller than", r"at most", r"at the most", r"up to(?= \d)", r"capped at",
    r"or less", r"or fewer", r"or lower", r"or earlier", r"or below", r"or under", r"maximum",
)
_MIN_PHRASES = (
    r"no less than", r"not less than", r"no fewer than", r"no shorter than", r"no earlier than",
    r"no lower than", r"at least", r"or more", r"or later", r"or higher", r"or newer", r"or above",
    r"or greater", r"or over", r"and later", r"and above", r"and up", r"and newer", r"minimum",
)
# Comparators: their direction can be flipped by a negation before them.
_ABOVE = r"more than|longer than|greater than|larger than|bigger than|heavier than|taller than|higher than|" \
         r"later than|exceeds?|exceeding|over(?= \d)|above(?= \d)|past(?= \d)|beyond(?= \d)"
_BELOW = r"less than|fewer than|shorter than|smaller than|lighter than|lower than|earlier than|" \
         r"under(?= \d)|below(?= \d)|within(?= \d)"

_COMPLEMENTS = r"outside(?: of)?|except(?: for)?|excluding|apart from|other than"

_NEGATION_WORDS = r"not|no|never|nor|cannot"
_CLAUSE = r"[^,;:.?!]*?"


def _clock(hour: int, minute: int, meridiem: str | None) -> str:
    if meridiem == "pm" and hour < 12:
        hour += 12
    elif meridiem == "am" and hour == 12:
        hour = 0
    return f"{hour % 24:02d}{minute:02d}h"


_UNITS_WORDS: Mapping[str, int] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}
_SCALES: Mapping[str, int] = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
_NUMBER_WORD = "|".join((*_UNITS_WORDS, *_SCALES))
# A run of number words ("three hundred and fifty", "ten thousand", "twenty-four") or a number with a
# scale word ("10 thousand", "2 million"); a lone "one" is left alone (it is as often a pronoun).
_NUMBER_RUN = re.compile(rf"\b(?:\d+(?:\.\d+)?\s+)?(?:{_NUMBER_WORD})(?:(?:\s+and\s+|[\s-]+)(?:{_NUMBER_WORD}))*\b")


def _spelled_number(match: re.Match[str]) -> str:
    words = re.split(r"[\s-]+", match.group(0).replace(" and ", " "))
    if words == ["one"]:
        return "one"
    total, current = 0.0, 0.0
    for word in words:
        if word in _SCALES:
            scale = _SCALES[word]
            if scale == 100:
                current = (current or 1) * 100
            else:
                total += (current or 1) * scale
                current = 0
        elif word in _UNITS_WORDS:
            current += _UNITS_WORDS[word]
        else:
            current += float(word)
    return _plain(total + current)


def _plain(number: float) -> str:
    """A number without exponent or trailing zeros: 2500000, 0.5."""
    return f"{number:.6f}".rstrip("0").rstrip(".")


_FLIPPED = {"cmp_above": "atmost", "cmp_below": "atleast"}
Rewrite = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]

# The rewrites of one pass, in order (each may rely on the ones before it).
_REWRITES: tuple[Rewrite, ...] = tuple((re.compile(pattern), replacement) for pattern, replacement in (
    (r"(?<=[a-z])(?<!\btz)_(?=[a-z])", " "),  # snake_case -> snake case, as kebab-case splits
    (r"\ba\.m\.", "am"), (r"\bp\.m\.", "pm"),
    # Date and merge conventions, each one word: "day/month/year", "DD.MM.YYYY" -> dmyformat; ISO dates
    # -> ymdformat; "squash-merged" -> squash; "a merge commit" -> mergecommit.
    (r"\b(?:dd?|day)\s?([/.-])\s?(?:mm?|month)\s?\1\s?(?:yyyy|yy|year)\b", " dmyformat "),
    (r"\b(?:mm?|month)\s?([/.-])\s?(?:dd?|day)\s?\1\s?(?:yyyy|yy|year)\b", " mdyformat "),
    (r"\b(?:yyyy|year)\s?([/.-])\s?(?:mm|month)\s?\1\s?(?:dd|day)\b|\biso[ -]?8601\b|\biso(?= dates?\b| format\b)",
     " ymdformat "),
    (r"\bsquash(?:[- ]?merg\w*)?\b", "squash"), (r"\bmerge commits?\b", "mergecommit"),
    (r"\bfast[- ]forward\w*\b", "fastforward"),
    # Rounding modes, each one word: "half to even" (banker's rounding), "half away from zero" (half up).
    (r"\bhalf (?:to|towards) even\b|\bbanker'?s rounding\b", "halfeven"),
    (r"\bhalf away from zero\b|\bhalf up\b", "halfup"), (r"\bhalf (?:towards? zero|down)\b", "halfdown"),
    # A likelihood or a rank said as a level: "a high risk" is likely, "top priority" is first.
    (r"\b(?:a )?(?:high|significant|major|serious) (?:risk|likelihood|probability|chance)\b|\bhighly likely\b", "likely"),
    (r"\b(?:a )?(?:low|minor|slight|remote) (?:risk|likelihood|probability|chance)\b|\bhighly unlikely\b", "unlikely"),
    (r"\b(?:top|highest|first) priority\b|\bahead of (?:all|every) (?:the )?other\b", "first"),
    (r"\b(?:lowest|bottom|last) priority\b|\bafter (?:all|every) (?:the )?other\b", "last"),
    (r"(?<=\d),(?=\d{3}\b)", ""),  # 2,000 -> 2000
    # Spelled numbers and common fractions of an hour: "three hundred and fifty" -> 350, "10k" -> 10000,
    # "a quarter of an hour" -> "15 minutes", "half an hour" -> "30 minutes".
    (r"\b(?:a|one) quarter of an hour\b", "15 minutes"), (r"\bhalf an hour\b", "30 minutes"),
    (r"\b(?:an|one) hour and a half\b", "90 minutes"), (r"\bthree quarters of an hour\b", "45 minutes"),
    (r"\ba dozen\b", "12"), (r"\b(?:a|one) fortnight\b", "14 days"),
    # "for a week", "within an hour": one unit of time is a value ("for a week" / "for 7 days").
    (r"\b(for|within|in|after|than|over|under|about|past) (?:a|an|one) (minute|hour|day|week|month|year)\b", r"\1 1 \2"),
    (r"\b(\d+(?:\.\d+)?)k\b", lambda m: _plain(float(m.group(1)) * 1000)),
    (_NUMBER_RUN.pattern, _spelled_number),
    # Hours and minutes in short forms after a number ("6 h", "5 min", "90 mins"); not a clock ("0200h").
    (r"(?<![\d.])(\d{1,3}(?:\.\d+)?)\s?(?:h|hrs?)\b", r"\1 hours"), (r"(?<![\d.])(\d+(?:\.\d+)?)\s?mins?\b", r"\1 minutes"),
    (r"\b(\d{1,2}):(\d{2})(?:\s?(am|pm))?\b", lambda m: _clock(int(m.group(1)), int(m.group(2)), m.group(3))),
    (r"\b(\d{1,2})\s?(am|pm)\b", lambda m: _clock(int(m.group(1)), 0, m.group(2))),
    (r"\bnoon\b|\bmidday\b", "1200h"), (r"\bmidnight\b", "0000h"),
    *_TIME_ZONES,
    (r"€+\s?(\d[\d.]*)", r"\1 eur"), (r"[$]+\s?(\d[\d.]*)", r"\1 usd"), (r"£+\s?(\d[\d.]*)", r"\1 gbp"),
    (r"(?:\bminus\s+|(?<![\w.])[-−]\s?)(?=\d[\d.]*\s?(?:°|degrees?|celsius|fahrenheit))", "minus "),
    *((rf"(\d)\s?(?:{pattern})", rf"\1 {unit}") for pattern, unit in _UNIT_SPELLINGS),
    (r"\b(\d+)-([a-z]{3,})\b", r"\1 \2"),  # "12-column", "30-day"
    *((rf"\b{stem}(?:e|es|ed|ing)\b", factor) for stem, factor in _MULTIPLES),  # "doubles" -> "2x"
    (r"\b(" + "|".join(_ORDINALS) + r")\b(?!-)", lambda m: _ORDINALS[m.group(1)]),
    (rf"\b(?:{'|'.join(_MAX_PHRASES)})\b", "atmost"),
    (rf"\b(?:{'|'.join(_MIN_PHRASES)})\b", "atleast"),
    (rf"\b(?:{_ABOVE})\b", "cmp_above"),
    (rf"\b(?:{_BELOW})\b", "cmp_below"),
    # A negation before a comparator in the same clause flips it and is used up.
    (rf"\b(?:{_NEGATION_WORDS})\b({_CLAUSE})\b(cmp_above|cmp_below)\b",
     lambda m: f"{m.group(1).strip()} {_FLIPPED[m.group(2)]}".strip()),
    (r"\bcmp_above\b", "atleast"), (r"\bcmp_below\b", "atmost"),
    (rf"\b(?:{_COMPLEMENTS})\b", "not"),
    (r"\s+", " "),
))


@functools.lru_cache(maxsize=8192)
def canonical_text(normal: str) -> str:
    """The normalised text with values, units, bounds and complements written one way (see the
    module docstring). Idempotent: one rewrite can expose another, so it runs to a fixpoint.
    Cached: state items are compared with many others, and the text decides the answer alone."""
    previous, text = None, normal
    for _ in range(4):  # each pass only shortens or settles the text; a cap keeps that an assumption
        if text == previous:
            break
        previous = text
        for pattern, replacement in _REWRITES:
            text = pattern.sub(replacement, text)
        text = text.strip()
    return text


# --------------------------------------------------------------------------- value slots

# Canonical unit token -> (dimension, factor to the dimension's base unit).
_DIMENSIONS: Mapping[str, tuple[str, float]] = {
    "millisecond": ("duration", 0.001), "second": ("duration", 1), "minute": ("duration", 60),
    "hour": ("duration", 3600), "day": ("duration", 86400), "week": ("duration", 604800),
    "month": ("duration", 2629800), "year": ("duration", 31557600),
    "kilobyte": ("size", 1e3), "megabyte": ("size", 1e6), "gigabyte": ("size", 1e9),
    "kg": ("mass", 1), "gram": ("mass", 0.001), "tonne": ("mass", 1000),
    "metre": ("length", 1), "km": ("length", 1000), "cm": ("length", 0.01), "mm": ("length", 0.001),
    "celsius": ("temperature", 1), "fahrenheit": ("temperature_f", 1),
    "eur": ("money_eur", 1), "usd": ("money_usd", 1), "gbp": ("money_gbp", 1), "percent": ("percent", 1),
}

_CLOCK = re.compile(r"^\d{4}h$")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")


@dataclasses.dataclass(frozen=True)
class ValueSlot:
    """One value a text states: its dimension ("clock", "timezone", "duration", "mass", a counted
    noun such as "attempt"...), its magnitude in the dimension's base unit (or a name for
    time zones) and the words that said it."""

    dimension: str
    value: str
    surface: str


def value_slots(tokens: Sequence[str]) -> list[ValueSlot]:
    """The values among canonical content tokens, in order (see canonical_text)."""
    slots: list[ValueSlot] = []
    for index, token in enumerate(tokens):
        if _CLOCK.match(token):
            slots.append(ValueSlot("clock", token, token))
        elif token.startswith("tz_"):
            slots.append(ValueSlot("timezone", token, token))
        elif _NUMBER.match(token):
            sign = -1 if index > 0 and tokens[index - 1] == "minus" else 1
            following = tokens[index + 1] if index + 1 < len(tokens) else ""
            if following in _DIMENSIONS:
                dimension, factor = _DIMENSIONS[following]
                amount = sign * float(token) * factor
                slots.append(ValueSlot(dimension, f"{amount:g}", f"{token} {following}"))
    return slots


def measured_dimensions(tokens: Sequence[str]) -> frozenset[str]:
    """The dimensions of the values a text states (clock and time zone left out)."""
    return frozenset(s.dimension for s in value_slots(tokens) if s.dimension not in ("clock", "timezone"))


BOUNDS = frozenset({"atmost", "atleast"})
UNIT_TOKENS = frozenset(_DIMENSIONS)
