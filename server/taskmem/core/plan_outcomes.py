"""The words of finished work: stems, irregular past tenses, and the outcomes of common step verbs.

Plan inference (core/plan_inference.py) reads a step title as a command ("Send the invoice") and
asks whether a clause says that command's outcome happened. People rarely repeat the title's verb:
they say what the finished step left behind ("The invoice went out", "The site is live"). The
table below lists, per group of common step verbs, the general English that says such a step
happened: the verbs' synonyms in the past tense and the states a finished step leaves. It is
general vocabulary, not phrasing taken from any labelled set; a verb's own past tense always
counts and is listed only where it is irregular. Pure data and a stemmer, no I/O.
"""

from __future__ import annotations

import functools

# Past tenses that do not end in -ed, mapped to the verb (for title matching as well).
IRREGULAR = {
    "built": "build", "rebuilt": "rebuild", "made": "make", "wrote": "write", "written": "write",
    "rewrote": "rewrite", "rewritten": "rewrite", "ran": "run", "sent": "send", "got": "get", "gotten": "get",
    "took": "take", "taken": "take", "did": "do", "found": "find", "gave": "give", "given": "give",
    "bought": "buy", "brought": "bring", "chose": "choose", "chosen": "choose", "drew": "draw", "drawn": "draw",
    "spun": "spin", "understood": "understand", "won": "win", "began": "begin", "begun": "begin",
    "broke": "break", "broken": "break", "held": "hold", "kept": "keep", "left": "leave", "paid": "pay",
    "hung": "hang", "laid": "lay", "sown": "sow", "sold": "sell", "taught": "teach", "told": "tell",
    "stood": "stand", "torn": "tear", "tore": "tear", "dug": "dig", "fed": "feed", "met": "meet",
}
# Irregular forms that are no completion cue of their own ("the job hung", "began", "left").
NOT_COMPLETION = frozenset({"began", "begun", "broke", "broken", "held", "kept", "left", "hung", "fed", "met"})

_VERB_PREFIXES = frozenset({"e", "re"})


@functools.lru_cache(maxsize=16_384)
def stem(word: str) -> str:
    """A crude, stable stem so "built"/"build", "pushed"/"push", "verified"/"verify" meet."""
    prefix, _, rest = word.partition("-")
    if prefix in _VERB_PREFIXES and rest.isalpha():  # "e-filed" is filed, "re-sent" is sent
        word = rest
    w = IRREGULAR.get(word, word)
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 \
                and not (suffix == "s" and w[-2:] in ("ss", "us", "is")):
            w = w[: -len(suffix)]
            if suffix in ("ing", "ed") and len(w) >= 6 and w.endswith("ell"):
                w = w[:-1]  # British doubling: "cancelled", "labelling" (not "spelled")
            break
    if w.endswith("ion") and len(w) >= 7:  # "provisioned" and "provision", "migrated" and "migration"
        w = w[:-3]
    if w.endswith("i"):
        w = w[:-1] + "y"
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeioulsz":  # after the e: "programme" meets "programmes"
        w = w[:-1]
    return w


# Each row: the verbs of a group of common step verbs | the outcomes that say such a step happened
# (phrases are words in a row; "'s" reads as "is"; "all", "already", "finally" and "fully" inside a
# phrase are skipped: "are all in" is "are in"). A verb may sit in several rows; its outcomes are
# the union. What a step hands to someone else ("sent for approval") is no outcome of a step whose
# verb is that someone's decision: plan_inference's _awaits_decision guards it.
OUTCOME_TABLE = (
    ("send email mail post forward deliver dispatch share circulate distribute notify inform submit file reply"
     " respond return invoice bill",
     "sent, delivered, emailed, mailed, posted, forwarded, dispatched, shared, circulated, distributed, notified,"
     " informed, submitted, filed, replied, responded, returned, invoiced, billed, went out, gone out, is out,"
     " are out, is with, are with, in the post, in the mail"),
    # A submission is in: "the application is in", "the return went in".
    ("submit file apply lodge", "submitted, filed, applied, lodged, is in, are in, went in"),
    # Arriving finishes a delivery or an order, never a send: "the invitations arrived" from the printer.
    ("deliver order buy purchase", "arrived, signed for, dropped off, handed over, delivered"),
    ("approve sign accept authorize authorise endorse ratify greenlight",
     "approved, signed, signed off, accepted, authorized, authorised, endorsed, ratified, greenlit,"
     " got the go-ahead, got approval, approval granted, got sign-off, lgtm, in hand"),
    # What a get-step asks for arrives: "the permit was granted", "the quotes came in".
    ("get obtain secure receive win acquire",
     "got, obtained, secured, received, won, acquired, granted, issued, awarded, came through, came in,"
     " in hand, is ours, are ours"),
    ("publish release ship launch post announce issue",
     "published, released, shipped, launched, posted, announced, issued, is live, are live, went live, gone live,"
     " now live, live on, is out, are out, now out, went out, is up, are up, now available, is available,"
     " are available"),
    ("deploy roll promote rollout",
     "deployed, rolled out, promoted, is live, are live, went live, gone live, now live, live on, live in,"
     " now serving, now serves, now serve, is serving, are serving, now runs, now run, is up, are up"),
    ("upgrade update bump patch migrate switch move relocate convert port renew rotate flash",
     "upgraded, updated, bumped, patched, migrated, switched, moved, relocated, converted, ported, renewed,"
     " rotated, now runs, now run, now on, is on, are on, runs on, run on,"
     " now at, is at, are at, now uses, now use, now points, now point"),
    ("write draft outline document prepare compose author design plan map edit revise rewrite summarise summarize"
     " transcribe translate record",
     "written, wrote, drafted, outlined, documented, prepared, composed, authored, designed, planned, mapped out,"
     " edited, revised, rewritten, summarised, summarized, transcribed, translated, recorded, committed,"
     " checked in, exists, now exists, is in, are in, is on, are on, ready, is up, is final, are final, is back,"
     " are back"),
    ("build create provision set install configure enable add implement scaffold make generate spin stand open"
     " register assemble",
     "built, created, provisioned, installed, configured, enabled, added, implemented, scaffolded, made, generated,"
     " assembled, spun up, stood up, opened, registered, is up, are up, in place, exists,"
     " now exists, works, ready, is set up, is open, are open, now open"),
    # Things put somewhere to stay: fixtures, hangings, plantings.
    ("install fit mount hang lay place plant sow replace",
     "installed, fitted, mounted, hung, laid, placed, planted, sown, sowed, in place, is in, are in, is up, are up,"
     " on the wall, in the ground"),
    ("print copy photocopy laminate",
     "printed, copied, photocopied, laminated, back from the printer, back from the printers"),
    ("fix resolve repair debug address unblock restore alter mend replace",
     "fixed, resolved, repaired, addressed, unblocked, restored, altered, mended, replaced, works, works again,"
     " is back, are back"),
    ("test verify check validate confirm review proofread audit evaluate benchmark measure inspect",
     "tested, passed, passes, green, verified, confirmed, checked, validated, reviewed, proofread, audited,"
     " evaluated, benchmarked, measured, inspected, looks good, look good, all good, lgtm, signed off,"
     " results are in, results are back, results back, came back clean"),
    ("merge land integrate commit",
     "merged, landed, integrated, committed, checked in, is in, are in, in main, in master"),
    ("book reserve schedule order buy purchase pay hire rent arrange",
     "booked, reserved, scheduled, ordered, bought, purchased, paid, hired, rented, arranged, confirmed, set for,"
     " is set, are set, on the calendar, calendared, is ours, are ours"),
    ("collect gather download fetch export import load ingest backfill copy sync transfer upload push pull extract"
     " scrape crawl harvest",
     "collected, gathered, downloaded, fetched, exported, imported, loaded, ingested, backfilled, copied, synced,"
     " transferred, uploaded, pushed, pulled, extracted, scraped, crawled, harvested, landed, is in, are in,"
     " in hand, brought in"),
    # Events: a meeting, an opening, a visit took place.
    ("hold host organise organize convene run present give teach meet",
     "held, hosted, organised, organized, convened, presented, gave, given, taught, met, took place, happened,"
     " went ahead, went well"),
    ("delete remove decommission clean prune retire drop shut disable revoke deprecate purge wipe demolish tear"
     " rip strip",
     "deleted, removed, decommissioned, cleaned, pruned, retired, dropped, shut down, disabled, revoked,"
     " deprecated, purged, wiped, demolished, torn out, ripped out, stripped out, is gone, are gone, is out, are out,"
     " is clean, are clean, is empty, are empty"),
)


def _outcomes_by_verb() -> dict[str, frozenset[tuple[str, ...]]]:
    table: dict[str, set[tuple[str, ...]]] = {}
    for verbs, outcomes in OUTCOME_TABLE:
        phrases = {tuple(phrase.split()) for phrase in outcomes.split(", ")}
        for verb in verbs.split():
            table.setdefault(stem(verb), set()).update(phrases)
    return {verb: frozenset(phrases) for verb, phrases in table.items()}


OUTCOMES = _outcomes_by_verb()  # verb stem → its outcome phrases
ALL_OUTCOMES = frozenset(phrase for phrases in OUTCOMES.values() for phrase in phrases)
TABLE_VERBS = frozenset(verb for verbs, _ in OUTCOME_TABLE for verb in verbs.split())
OUTCOME_WORDS = frozenset(word for phrase in ALL_OUTCOMES for word in phrase)
