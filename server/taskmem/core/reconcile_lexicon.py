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


# Design properties and what violates them, from general engineering and everyday knowledge: a text
# that states the property of something and another that describes behaviour breaking it contradict
# each other however differently they are worded ("the checkout service is stateless" / "keeps each
# cart in process memory between requests"; "every step must be idempotent" / "the load step appends
# its rows again on every retry"). Each entry: (name, property, violations) as regular expressions
# over the lowercase text; hyphens and spaces in compounds are both accepted ("[- ]?").
# Written from the meaning of each property, not from any labelled pair.
_BETWEEN = r"(?:requests|sessions|calls|runs|restarts|visits|invocations|deploys|page loads)"
PROPERTY_VIOLATIONS: tuple[tuple[str, str, str], ...] = (
    ("stateless",
     r"\bstateless\b|\bholds? no state\b|\bkeeps? no (?:state|session)",
     rf"\bstateful\b|\b(?:keeps?|keeping|kept|stores?|storing|stored|holds?|holding|held|remembers?|remembering"
     rf"|remembered|retains?|retaining|persists?|persisting|caches?|caching|saves?|saving|carr(?:y|ies)) .*"
     rf"(?:\bin (?:process |local |server |its own |the )?(?:memory|ram)\b|\b(?:between|across|from one \w+ to the next) {_BETWEEN}\b"
     rf"|\bsticky sessions?\b|\bsession state\b)|\bsticky sessions?\b"),
    ("idempotent",
     r"\bidempotent\b|\bidempotency\b|\b(?:twice|again|more than once|repeated\w*|re-?run\w*|retr(?:y|ies|ied))\b.*\bno (?:additional |extra |further |other )?(?:effect|change|duplicates?)\b",
     r"\b(?:appends?|appending|inserts?|inserting|adds?|adding|creates?|creating|charges?|charging|sends?|sending"
     r"|writes?|writing|increments?|incrementing|duplicates?|duplicating|books?|booking|emails?|emailing|posts?|posting"
     r"|bills?|billing|issues?|issuing)\b.*\b(?:again|twice|another (?:copy|time|row)|each retry|every retry|on retry"
     r"|when (?:it is )?retried|on every (?:re-?run|run)|each time it (?:is )?re-?runs?)\b"
     r"|\bduplicates? (?:rows|records|charges|emails|orders|entries)\b.*\bretr"),
    ("immutable",
     r"\bimmutable\b|\bappend[- ]only\b|\bwrite[- ]once\b|\bnever (?:modified|changed|edited|updated|overwritten|deleted)\b"
     r"|\bcannot be (?:modified|changed|edited|updated|overwritten|deleted)\b",
     r"\b(?:modif(?:y|ies|ied)|edit(?:s|ed)?|updat(?:e|es|ed)|overwrit(?:e|es|ten)|rewrit(?:e|es|ten)|patch(?:es|ed)?"
     r"|delet(?:e|es|ed)|remov(?:e|es|ed)|mutat(?:e|es|ed))\b.*\bin place\b"
     r"|\bin place\b.*\b(?:modif|edit|updat|overwrit|rewrit|patch|delet|mutat)"
     r"|\b(?:updates?|deletes?|overwrites?|edits?) (?:existing|old|past|earlier|previous) (?:rows|records|entries|lines|events|versions)\b"),
    ("read-only",
     r"\bread[- ]only\b",
     r"\b(?:writes?|writing|inserts?|updates?|deletes?|modif(?:y|ies)|saves?) (?:to|into|in|rows|records|data|files?)\b"),
    ("offline",
     r"\b(?:works?|runs?|operates?|functions?) (?:fully |entirely |completely )?offline\b|\boffline[- ]first\b"
     r"|\bno (?:network|internet) (?:access|connection|calls)\b|\bnever (?:calls?|contacts?|phones?) (?:out|home|the internet)\b"
     r"|\bair[- ]gapped\b|\bnever leaves? the (?:device|machine|laptop|phone|browser|building|premises|network)\b"
     r"|\bnever (?:sends?|uploads?|transmits?|shares?|posts?) .*\b(?:to|with) (?:our |the |a |any )?(?:servers?|cloud|api|backend|third part(?:y|ies)|internet|vendor)\b",
     r"\b(?:uploads?|uploading|sends?|sending|transmits?|posts?|posting|syncs?|syncing|streams?|streaming|forwards?"
     r"|shares?|sharing|phones? home|calls?|calling|fetches|fetching|downloads?|downloading)\b.*\b(?:to|from|with) (?:our |the |a |an |their |its )?"
     r"(?:servers?|cloud|api|backend|remote|internet|third[- ]party|vendor|web ?service|endpoint|online)"
     r"|\brequires? (?:an? )?(?:internet|network|online) (?:connection|access)\b"),
    ("synchronous",
     r"\bsynchronous(?:ly)?\b|\bblocking\b|\binline\b|\bbefore (?:it|the \w+) (?:returns|responds|answers|replies)\b|\bin the request path\b",
     r"\basynchronous(?:ly)?\b|\bnon[- ]blocking\b|\b(?:queued|enqueued|deferred|in the background|background (?:job|worker|task)|later by a (?:job|worker)|fire[- ]and[- ]forget)\b"),
    ("encrypted",
     r"\bencrypted\b|\bencrypts?\b|\bencryption\b",
     r"\bunencrypted\b|\bplain ?text\b|\bin the clear\b|\bclear ?text\b|\bnot encrypted\b|\bwithout encryption\b"),
    ("private",
     r"\bprivate\b|\binternal[- ]only\b|\binvite[- ]only\b|\binvitation[- ]only\b|\bmembers[- ]only\b|\bnot public\b",
     r"\bpublic(?:ly)?\b|\bopen to (?:everyone|anyone|all|the public)\b|\banyone (?:can|may|with the link)\b|\bworld[- ]readable\b|\bpublished\b"),
    ("anonymous",
     r"\banonym(?:ous|ised|ized|ously|ity)\b|\bno personal (?:data|information)\b|\bwithout (?:identifying|personal)\b|\bde-?identified\b",
     r"\b(?:names?|e-?mail address(?:es)?|emails|ip address(?:es)?|user ?ids?|phone numbers|addresses|personal (?:data|details|information))\b"
     r"|\bidentif(?:y|ies|iable|ying)\b|\btracks? (?:each|every|individual)\b"),
    ("single-region",
     r"\b(?:single|one) (?:region|data ?cent(?:re|er)|zone|site)\b|\bonly in (?:one|a single) region\b",
     r"\bmulti[- ]region\b|\b(?:across|in) (?:two|three|several|multiple|many|all) (?:regions|data ?cent(?:res|ers)|zones|sites)\b"
     r"|\b(?:second|another|other) region\b|\breplicated (?:to|across)\b"),
    ("monorepo",
     r"\bmono[- ]?repo\b|\b(?:one|a single|the same) (?:repo|repository)\b",
     r"\bpoly[- ]?repo\b|\b(?:own|separate|their own|its own|different) (?:repo|repository|repositories|repos)\b"
     r"|\b(?:repo|repository) (?:per|for each)\b"),
    ("keyboard",
     r"\b(?:keyboard alone|keyboard only|keyboard[- ]accessible|by keyboard|with (?:a|the) keyboard alone|without a mouse)\b",
     r"\b(?:only with a mouse|mouse only|requires? a mouse|needs? a mouse|hover only|only on hover|drag and drop only|only by dragging)\b"),
    ("zero-downtime",
     r"\b(?:zero|no|without) downtime\b|\bwithout (?:an )?outage\b|\bstays? (?:up|online|available) (?:during|while)\b",
     r"\bdowntime\b|\bmaintenance window\b|\b(?:taken|take|takes|goes|go) (?:offline|down)\b|\boutage\b|\bunavailable\b"),
    ("backward-compatible",
     r"\bbackwards?[- ]compatib\w*|\bnon[- ]breaking\b|\bnever break\w* (?:existing|old)\b",
     r"\bbreaking change\b|\bbreaks? (?:existing|old|current) (?:clients|callers|users|integrations)\b|\b(?:removes?|renames?) (?:a |the )?(?:field|endpoint|column|parameter)\b"),
    ("deterministic",
     r"\bdeterministic\b|\breproducible\b|\bsame (?:output|result|answer) every (?:time|run)\b",
     r"\bnon[- ]?deterministic\b|\brandom(?:ly|ised|ized)?\b|\bvar(?:y|ies) (?:between|from) (?:runs|run to run)\b|\bunpinned\b|\blatest version\b"),
    ("pinned",
     r"\bpinned\b|\bexact versions?\b|\block ?file\b",
     r"\bunpinned\b|\blatest (?:version|release|tag)\b|\bfloating (?:version|tag)\b|\bversion ranges?\b"),
    ("sequential",
     r"\bsequential(?:ly)?\b|\bone (?:at a time|after (?:the other|another))\b|\bin series\b|\bserially\b",
     r"\bin parallel\b|\bparallel\b|\bconcurrent(?:ly)?\b|\bat the same time\b|\bsimultaneous(?:ly)?\b|\bside by side\b"),
    ("free",
     r"\b(?:free of charge|at no (?:extra )?cost|for free|included in the (?:price|rate|fee|ticket|cost)|is included|are included|complimentary)\b",
     r"\b(?:charged|billed|paid) (?:separately|extra|additionally|on top)\b|\b(?:extra|additional) (?:charge|fee|cost)\b|\bsurcharge\b|\bcosts? extra\b|\bnot included\b"),
    ("self-hosted",
     r"\bself[- ]hosted\b|\bon[- ]prem(?:ise|ises)?\b|\bin[- ]house\b|\bour own (?:servers|hardware|data ?cent(?:re|er))\b",
     r"\b(?:saas|managed service|hosted by (?:the vendor|a third party)|vendor[- ]hosted|third[- ]party (?:hosted|service|cloud))\b"),
    ("conflict-resolution",
     r"\blast (?:write|writer|edit|save) wins\b",
     r"\bboth (?:versions|copies|edits|changes) (?:are )?kept\b|\bkeeps? both\b|\bmanual(?:ly)? (?:merge|resolution|resolved)\b"
     r"|\b(?:a )?reviewer (?:picks|chooses|decides)\b|\bfirst (?:write|writer|edit|save) wins\b|\bflagged as a conflict\b"),
    ("allocation",
     r"\bfirst come,? first served\b|\bin (?:the )?order (?:of|they) (?:arrival|sign ?up|registration|booking|applied|arrive)\b",
     r"\b(?:by )?(?:lottery|ballot|draw|raffle|random(?:ly)?|at random|by seniority|by need|by priority)\b"),
    # Everyday properties: what a diet or a label rules out.
    ("vegetarian",
     r"\bvegetarian\b|\bvegan\b|\bmeat[- ]free\b|\bplant[- ]based\b",
     r"\b(?:meat|beef|pork|chicken|lamb|bacon|ham|fish|salmon|tuna|prawns?|shrimp|sausages?|gelatine|anchov(?:y|ies))\b"),
    ("vegan",
     r"\bvegan\b|\bdairy[- ]free\b|\bplant[- ]based\b",
     r"\b(?:milk|butter|cream|cheese|eggs?|honey|yogh?urt|whey)\b(?!.*\b(?:oat|soy|almond|plant)\b)"),
    ("gluten-free",
     r"\bgluten[- ]free\b|\bcoeliac[- ]safe\b|\bceliac[- ]safe\b",
     r"\b(?:wheat|barley|rye|spelt|regular flour|white flour|semolina|couscous)\b"),
    ("nut-free",
     r"\bnut[- ]free\b|\bno nuts\b",
     r"\b(?:nuts|peanuts?|almonds?|walnuts?|hazelnuts?|cashews?|pecans?|pistachios?)\b"),
    ("alcohol-free",
     r"\balcohol[- ]free\b|\bdry (?:event|wedding|party)\b|\bno alcohol\b",
     r"\b(?:wine|beer|prosecco|champagne|cocktails?|spirits|open bar|cash bar|gin|whisky)\b"),
    ("smoke-free",
     r"\bsmoke[- ]free\b|\bno smoking\b|\bnon[- ]smoking\b",
     r"\bsmoking (?:area|room|allowed|permitted)\b|\bsmokers? (?:may|can)\b"),
    ("pet-free",
     r"\bno pets\b|\bpet[- ]free\b|\bno (?:dogs|animals)\b",
     r"\b(?:dogs?|cats?|pets?) (?:are |is )?(?:welcome|allowed|permitted)\b|\bpet[- ]friendly\b|\bbring (?:your|their) dogs?\b"),
    ("cash-only",
     r"\bcash only\b|\bcash[- ]only\b|\bonly (?:takes|accepts) cash\b",
     r"\b(?:cards?|contactless|card payments?|apple pay|google pay)\b"),
    ("handmade",
     r"\bhand[- ]?made\b|\bby hand\b|\bhand[- ](?:sewn|stitched|painted|crafted|built)\b",
     r"\bmachine[- ]made\b|\bby machine\b|\bmass[- ]produced\b|\bfactory[- ]made\b"),
    ("verbose",
     r"\bverbose\b|\bdebug (?:level|logging)\b|\blogs? (?:every|each|all) (?:requests?|calls?|steps?|events?)\b",
     r"\bquiet(?:ly)?\b|\bsilent(?:ly)?\b|\bonly (?:the )?(?:final |a )?summary\b|\b(?:only )?errors only\b|\bonly errors\b"),
    ("working-hours",
     r"\b(?:during|within|in) (?:business|working|office) hours\b|\bonly on weekdays\b|\bweekdays only\b",
     r"\bovernight\b|\bat night\b|\b(?:outside|after) (?:of )?(?:business|working|office) hours\b|\bon (?:the )?weekends?\b|\bweekends only\b"),
    ("manual-review",
     r"\bmanual(?:ly)? (?:approv\w*|review\w*)\b|\bhuman review\b|\bmust be (?:approved|reviewed|signed off)\b"
     r"|\brequires? (?:an? )?(?:approval|review|sign[- ]off)\b",
     r"\bauto(?:matically|[- ])(?:approved|merged|deployed|published|accepted|released)\b|\bwithout (?:a )?(?:review|approval)\b"
     r"|\bno (?:review|approval|sign[- ]off) (?:is )?(?:needed|required)\b"),
    ("open-source",
     r"\bopen[- ]source\b|\bpermissive(?:ly)? licen[cs]\w*",
     r"\bproprietary\b|\bclosed[- ]source\b|\bcommercial licen[cs]e\b|\b(?:a)?gpl\b|\bcopyleft\b"),
    ("real-time",
     r"\breal[- ]?time\b|\binstant(?:ly)?\b|\bas soon as (?:it|they|the \w+) (?:happens?|arrives?|changes?)\b",
     r"\b(?:nightly|daily|hourly|weekly) (?:batch|job|export|sync|run|import|upload)\b|\bin (?:a )?(?:nightly |daily )?batch(?:es)?\b"
     r"|\bonce a (?:day|night|week)\b"),
    ("in-person",
     r"\bin[- ]person\b|\bface[- ]to[- ]face\b",
     r"\bonline\b|\bvirtual(?:ly)?\b|\bover video\b|\bvideo call\b|\bremote(?:ly)?\b|\bzoom\b"),
    ("remote-work",
     r"\bfully remote\b|\bremote[- ]only\b|\bwork(?:s|ing)? from home\b",
     r"\bin the office\b|\bat the office\b|\bon[- ]site\b|\bin person\b|\boffice days?\b"),
    ("paperless",
     r"\bpaperless\b|\bdigital[- ]only\b|\bno paper\b",
     r"\bprinted\b|\bprint(?:s|ing)?\b|\bpaper (?:copies|copy|forms?|tickets?|receipts?)\b|\bby post\b"),
    ("non-refundable",
     r"\bnon[- ]?refundable\b|\bno refunds?\b",
     r"\b(?:full |partial )?refunds? (?:is |are )?(?:given|issued|available|offered|paid)\b|\brefundable\b|\bmoney back\b"
     r"|\bget (?:a|their|your) (?:money|refund)\b|\bare refunded\b|\bis refunded\b"),
    ("step-free",
     r"\bstep[- ]free\b|\bwheelchair[- ]accessible\b|\bfully accessible\b",
     r"\bstairs only\b|\bno lift\b|\bno elevator\b|\bsteps? (?:at|to) the (?:entrance|door)\b|\bonly (?:by|via) (?:the )?stairs\b"),
    ("appointment-only",
     r"\bby appointment only\b|\bappointment[- ]only\b|\bonly by appointment\b",
     r"\bwalk[- ]ins? (?:are )?(?:welcome|accepted|allowed)\b|\bno appointment (?:is )?(?:needed|necessary|required)\b|\bdrop[- ]in\b"),
    ("lossless",
     r"\blossless\b|\buncompressed\b|\boriginal (?:quality|resolution)\b",
     r"\blossy\b|\bcompressed\b|\b(?:jpeg|jpg|mp3|downscaled|downsampled)\b"),
)

