"""The words plan inference (core/plan_inference) reads, as data: cues that say work is finished, words that
say it is not (negation, failure, work going on or to come, a part of the whole), and the words of its guards.

Each list earns its place on the labelled blind sets: bench/score_plan_inference.py --ablate empties one list at a
time and prints what changes (a list whose removal changes no answer on them is deleted; issue 38 deleted six).
The words that keep a step from being marked done (failure, negation, ongoing work) are kept whole: a blind set
shows few of them, and the one error we do not accept is a step marked done that is not.
"""

from __future__ import annotations

from taskmem.core.plan_outcomes import stem

COMPLETION = frozenset({
    "done", "complete", "completed", "finished", "✓", "succeeded", "successful", "successfully", "passed", "green",
    "finalised", "finalized"
})
# Cues that say a thing is in a good state but not which work made it so: they only ask.
WEAK_CUES = frozenset({
    "ok", "okay", "ready", "sorted", "fine", "happy", "yes", "clear", "pass", "cut", "shut", "put", "went", "came",
    "fed", "ticked"
})
# Words ending in -ed that say nothing was finished.
NEUTRAL_ED = frozenset({
    "needed", "required", "expected", "planned", "supposed", "intended", "wanted", "proposed", "suggested",
    "requested", "asked", "based", "called", "named", "related", "limited", "hundred", "assigned", "allowed",
    "estimated"
})
NEGATION = frozenset({"not", "never", "cannot", "no", "without", "nope", "neither", "nor"})
FAILURE = frozenset({
    "fail", "fails", "failed", "failing", "failure", "error", "errors", "broken", "crashed", "stuck", "blocked",
    "timeout", "denied", "refused", "rejected", "aborted", "reverted", "corrupt", "corrupted", "wrong", "missing",
    "positive", "redo", "rollback", "cancelled", "canceled"
})
ONGOING = frozenset({
    "start", "starting", "started", "begin", "began", "working", "progress", "ongoing", "underway", "running",
    "still", "continuing", "retry", "retrying", "trying", "tried", "attempting", "waiting", "wait", "pending",
    "queued", "paused", "postponed", "deferred", "delayed", "stalled", "skipping", "skipped", "almost", "nearly",
    "partially", "partly", "half", "halfway", "mostly", "awaiting", "tbd", "eta", "yet", "some", "most", "only",
    "remaining", "except", "pencilled", "penciled", "provisionally", "tentatively"
})
PARTIAL_PHRASES = (("so", "far"), ("the", "rest"), ("to", "go"), ("on", "hold"), ("in", "review"),
                    ("under", "review"), ("for", "now"), ("for", "today"), ("ready", "to"),
                    ("rolled", "back"), ("pushed", "back"), ("first", "batch"), ("first", "half"),
                    ("first", "pass"), ("first", "round"), ("on", "order"))
# Before the cue these make it a plan, a condition or a possibility; a condition anywhere.
INTENT = frozenset({
    "will", "'ll", "going", "gonna", "shall", "should", "must", "need", "needs", "want", "let's", "next", "soon",
    "later", "tomorrow", "todo", "once", "when", "until", "before", "if", "unless", "can", "could", "may", "might",
    "would", "hope", "hopefully", "ensure", "sure", "please", "about"
})
LATER = frozenset({
    "tomorrow", "tomorow", "tonight", "weekend", "later", "next", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday", "soon", "upcoming"
})
CONTRAST = frozenset({"but", "however", "though", "although", "whereas", "yet", "except"})
STOP = frozenset({
    "the", "a", "an", "to", "and", "or", "of", "in", "into", "on", "onto", "for", "with", "from", "at", "by", "as",
    "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "it", "its", "this", "that", "these",
    "those", "all", "both", "also", "now", "i", "we", "our", "my", "me", "us", "so", "just", "up", "out", "off",
    "down", "over", "back", "new", "old", "step", "steps", "item", "items", "today", "too", "they", "their", "you",
    "he", "she"
})
PREPOSITIONS = frozenset({
    "to", "on", "in", "into", "onto", "for", "with", "from", "at", "by", "via", "across", "over", "under", "through",
    "about", "against", "between", "within", "per", "using"
})
# Steps whose outcome is given by others: handing the thing over is not it.
DECIDED_VERBS = frozenset(stem(v) for v in "get obtain secure receive win approve pass clear grant".split())
HANDED_OVER = frozenset({
    "submitted", "applied", "application", "lodged", "requested", "request", "filed", "sent", "emailed", "forwarded",
    "handed"
})
AWAITED = frozenset({"approval", "review", "sign-off", "signoff", "signature", "comments", "feedback", "decision"})
# Work that comes before a step's outcome: alone it finishes only a step whose verb it is.
PRECURSORS = frozenset(stem(w) for w in (
    "drafted prepared submitted applied lodged requested sent ordered booked scheduled arranged arrived"
    " printed proofed shortlisted primed pinned sampled validated generated emailed").split())
SCHEDULING = frozenset(stem(v) for v in "book reserve schedule arrange plan set organise organize order buy"
                        " purchase hire rent".split())
PART = frozenset({
    "section", "chapter", "part", "half", "intro", "portion", "page", "batch", "sample", "draft", "outline", "first"
})
SPANS = frozenset({"minutes", "hours", "hour", "day", "days", "week", "weeks", "month", "months", "fortnight"})
