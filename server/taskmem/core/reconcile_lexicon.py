"""General English knowledge the slot comparison needs: which words are the two poles of one
scale, and which nouns name a property whose modifiers are rival values.

Neither list is about any domain's phrasing: they are closed classes of ordinary English (scale
adjectives and their antonyms, property nouns), the part of a thesaurus the comparison needs.
No offline thesaurus on PyPI fits (checked: wordnet-lookup has words but no relations; nltk and wn
download WordNet at run time; the packages that bundle it are unmaintained), so the few hundred
words live here. Morphological antonyms (stateful/stateless, encrypted/unencrypted) and the
comparative/superlative forms of a pole (newest, lower, bigger) are derived, not listed.
"""

from __future__ import annotations

# Each entry: the two poles of one scale, each pole a few words that say it. Two aligned texts
# that put one pole where the other puts the opposite pole contradict each other, wherever the
# slot is ("keep the newest entry" / "keep the oldest entry", "high priority" / "low priority").
POLAR_SCALES: tuple[tuple[str, str], ...] = (
    ("high", "low"), ("new", "old"), ("left", "right"), ("top", "bottom"), ("up", "down"),
    ("inner", "outer"), ("early", "late"), ("first", "last"), ("before", "after"),
    ("atleast minimum", "atmost maximum"), ("optional voluntary", "mandatory required obligatory compulsory"),
    ("allow allowed permit permitted", "forbid forbidden deny denied prohibit prohibited block blocked"),
    ("enable enabled", "disable disabled"), ("include included", "exclude excluded"),
    ("accept accepted", "reject rejected decline declined"), ("ascending", "descending"),
    ("light", "dark"), ("long", "short"), ("large big", "small little"), ("fast quick", "slow"),
    ("hot warm", "cold cool"), ("wide", "narrow"), ("strict", "lenient loose"), ("public", "private"),
    ("internal", "external"), ("sync synchronous", "async asynchronous"), ("manual", "automatic automated"),
    ("open", "closed"), ("permanent", "temporary"), ("increase", "decrease reduce"), ("online", "offline"),
    ("upper", "lower"), ("horizontal", "vertical"), ("static", "dynamic"), ("eager", "lazy"),
    ("more", "less fewer"), ("client", "server"), ("frontend", "backend"), ("inbound", "outbound"),
    ("start", "end"), ("show shown visible", "hide hidden invisible"), ("on", "off"), ("true", "false"),
    ("full", "partial"), ("strong", "weak"), ("inclusive", "exclusive"), ("soft", "hard"),
    ("absolute", "relative"), ("positive", "negative"), ("gross", "net"), ("even", "odd"),
    ("input", "output"), ("plural", "singular"), ("landscape", "portrait"), ("verbose", "quiet terse"),
    ("expanded expand", "collapsed collapse"), ("same", "different"), ("deep", "shallow"),
    ("rich", "poor"), ("heavy", "light"), ("thick", "thin"), ("near close", "far distant"),
)

# Prefixes and suffix pairs that make a word's opposite: "stateless"/"stateful",
# "encrypted"/"unencrypted", "blocking"/"non-blocking" (after hyphen splitting, "non blocking").
NEGATING_PREFIXES: tuple[str, ...] = ("un", "non", "in", "im", "il", "ir", "dis", "a")
OPPOSITE_SUFFIXES: tuple[tuple[str, str], ...] = (("less", "ful"),)

# Nouns that name a property, a manner or a measure: their modifiers are the property's rival values
# ("economy class" / "business class", "snake case" / "kebab case"), not different objects. A
# modifier of any other noun picks out a different thing ("the Berlin attendees" / "the Madrid
# attendees", "the PCR assay" / "the ELISA assay").
ATTRIBUTE_NOUNS: frozenset[str] = frozenset("""
side style format case mode level priority class rate speed order ordering strategy method policy
type kind colour color theme font typeface layout time zone timezone unit currency language tone grade
tier frequency interval direction position orientation alignment encoding separator delimiter notation
convention scheme width height length weight size duration precision resolution quality status
visibility access join rounding sorting approach tense voice spelling casing naming shade palette
temperature pressure volume capacity budget threshold margin tolerance
""".split())
