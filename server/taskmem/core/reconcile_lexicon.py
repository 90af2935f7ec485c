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
    ("in inside", "out"), ("together jointly pair group", "separately apart alone solo individually"),
    ("series", "parallel"), ("wet", "dry"), ("single", "multiple"), ("fresh", "frozen freeze stale"),
    ("likely probable likelihood", "unlikely improbable"), ("sparingly sparing little", "plenty generously lots"),
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

# Closed classes of rival values: the members of one set are alternatives for one slot, so two
# aligned statements that fill the slot with different members choose differently ("pack the tablets
# in blisters" / "in bottles", "wire the panels in series" / "in parallel", "log at debug level" /
# "at warn level"). Written from general knowledge (levels, modalities, windows, conventions,
# strategies, channels, materials), not from any labelled pair; one word per member (a hyphenated
# value is left to its parts: "big-endian" is big/little), compared after stemming. Two members of one set in the
# differing spans of two aligned texts are a contrast wherever the slot is, as the poles above.
RIVAL_SETS: tuple[str, ...] = (
    # levels and grades
    "trace debug info notice warn warning error fatal critical",
    "low medium moderate high severe critical urgent",
    "bronze silver gold platinum diamond", "basic standard premium enterprise", "free paid",
    "junior senior principal", "alpha beta stable nightly canary",
    "draft final", "major minor patch",
    # modality and obligation (the polar pairs cover allowed/forbidden)
    "optional recommended mandatory", "allowlist denylist whitelist blacklist",
    # time windows and calendars
    "peak offpeak", "weekday weekend", "daytime nighttime overnight", "summer winter spring autumn",
    # how things are done
    "series parallel", "serial parallel concurrent sequential", "sync async batch streaming realtime",
    "poll webhook", "cron event", "rebase squash mergecommit fastforward", "fifo lifo lru lfu random roundrobin",
    "exponential linear constant fixed", "optimistic pessimistic", "canary rolling recreate",
    "up down nearest exact even ceiling floor truncate", "upsert append overwrite",
    "inline attached linked embedded", "eventual strong", "hard soft",
    "wired wireless bluetooth", "ac dc", "fresh frozen chilled ambient", "raw cooked",
    "remote hybrid",
    "indoor outdoor", "onsite offsite", "upstairs downstairs", "dubbed subtitled subtitles",
    "handwritten typed printed", "matte glossy", "duplex simplex", "colour color monochrome grayscale",
    # formats and conventions
    "camelcase snakecase kebabcase pascalcase camel snake kebab pascal",
    "tab space", "lf crlf", "utf-8 latin-1 ascii utf-16",
    "json yaml xml csv toml protobuf avro parquet ini",
    "markdown html pdf docx plaintext rtf", "png jpeg jpg svg webp gif tiff",
    "serif sans monospace", "bold italic regular", "ltr rtl", "metric imperial", "celsius fahrenheit",
    "iso epoch unix", "dmyformat mdyformat ymdformat", "semver calver", "british american australian canadian",
    "english french german spanish italian dutch portuguese chinese japanese latin arabic russian",
    "absolute relative", "percentage absolute",
    # channels, media, means
    "email sms phone letter fax chat slack video whatsapp", "cash card cheque invoice transfer",
    "air sea rail road truck ship plane train courier", "bottle bottles blister blisters jar sachet tube pouch carton",
    "paper electronic digital", "online offline", "tape disk ssd hdd cloud",
    "password passkey sso saml oauth oidc ldap mtls", "cookie token session jwt",
    "rest graphql grpc soap websocket", "tcp udp", "http https",
    "header query url", "ssr csr ssg", "portrait landscape",
)
