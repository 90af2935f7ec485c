"""The evidence reconciliation decides on: what one candidate and one current item of its type have in common,
where they differ, and whether the user's own words stand behind the candidate. Pure, no I/O.

Similarity alone cannot tell a restatement from a change ("Fit a chrome towel rail" / "Fit a white towel
rail" score 0.95, many true paraphrases 0.8), so every comparison also reads the two texts word by word
(core/reconcile_signals): an aligned slot that holds another value (a contrast), a frame about another
object (a distinction), the same words once synonyms are folded (a paraphrase), and the content words
nothing explains. The policy (core/reconcile) turns this into one outcome.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable

from taskmem.core.reconcile_signals import (
    Contrast,
    Distinction,
    change_phrase,
    content_tokens,
    find_contrast,
    find_distinction,
    is_paraphrase,
    named_overlap,
    named_replacements,
    paraphrase_tokens,
    scope_words,
    negation_count,
)
from taskmem.core.state_items import StateItem


@dataclasses.dataclass(frozen=True)
class Grounding:
    """Who stands behind a candidate. `user_ref` is its first ref to a user message (or the caller's own
    statement, for AddDecision), None for an item the agent or an extractor inferred by itself; `words` is
    what the user said in the messages it cites ("" when none, or for a statement)."""

    user_ref: str | None = None
    words: str = ""

    @property
    def user(self) -> bool:
        return self.user_ref is not None


NOT_GROUNDED = Grounding()


@dataclasses.dataclass(frozen=True)
class Evidence:
    """One candidate against one current item.

    cosine/score: their similarity (score adds the topic boost). aligned: the share of content words the
    two texts have in the same order (0-1). contrast: the aligned slot that holds another value, if any.
    distinction: the same frame about another object or measure, if any. paraphrase: why the two say the
    same in other words, if they do. added/dropped: the candidate's content words the item lacks and the
    item's the candidate lacks (light verbs aside). named_by_candidate: the item's words that the
    candidate names as retired ("... instead of Redis"). named_by_user: the item's words, absent from the
    candidate, that the user's message says (a user who speaks of the old value while asking for the new);
    user_says_new: the user's message says a word the candidate holds and the item does not.
    swap: the one short span (three words at most, not the first word) in which two otherwise equal texts
    differ, as (old, new): one slot given another value ("a chrome towel rail" / "a white towel rail").
    complement_differs: the two begin alike and end in other words (the same subject and verb with another
    complement: "translated by a sworn translator" / "by the consulate's service"). scope_differs: the
    texts hold different scope words ("only", "none"...: a restriction widened or narrowed).
    polarity_differs: one text is negated and the other is not.
    change: the candidate's change language, if any."""

    item: StateItem
    cosine: float
    score: float
    aligned: float
    contrast: Contrast | None
    distinction: Distinction | None
    paraphrase: str | None
    added: frozenset[str]
    dropped: frozenset[str]
    swap: tuple[str, str] | None
    complement_differs: bool
    scope_differs: bool
    polarity_differs: bool
    named_by_candidate: tuple[str, ...]
    named_by_user: tuple[str, ...]
    user_says_new: bool
    change: str | None

    @property
    def one_slot(self) -> bool:
        """The two share a frame and differ in one slot: a swapped span, another object, another complement."""
        return self.swap is not None or self.distinction is not None or self.complement_differs

    @property
    def restatement(self) -> bool:
        """The candidate says nothing the item does not: the same words, or the same plus detail (never
        another value: no contrast, no other scope or polarity, no change language)."""
        return self.contrast is None and not self.scope_differs \
            and not self.polarity_differs and not (self.change and self.added) and (not self.added or not self.dropped)


def gather(candidate: StateItem, item: StateItem, cosine: float, boost: float, min_alignment: float,
           grounding: Grounding) -> Evidence:
    """The evidence on `candidate` against `item`, their cosine given (the caller embeds)."""
    new_words, old_words = paraphrase_tokens(candidate.text), paraphrase_tokens(item.text)
    old_tokens, new_tokens = content_tokens(item.text), content_tokens(candidate.text)
    added, dropped = new_words - old_words, old_words - new_words
    distinguishing = set(old_tokens) - set(new_tokens)
    heard = set(content_tokens(grounding.words)) if grounding.words else set()
    # One word-by-word alignment serves the alignment ratio, the swapped slot and the other complement.
    matcher = difflib.SequenceMatcher(a=old_tokens, b=new_tokens, autojunk=False)
    opcodes = matcher.get_opcodes()
    return Evidence(
        item=item, cosine=cosine, score=min(1.0, cosine + boost),
        aligned=matcher.ratio() if old_tokens or new_tokens else 1.0,
        contrast=find_contrast(item.text, candidate.text, min_alignment),
        distinction=find_distinction(item.text, candidate.text, min_alignment),
        paraphrase=is_paraphrase(item.text, candidate.text),
        added=frozenset(added), dropped=frozenset(dropped),
        swap=_swap(opcodes, old_tokens, new_tokens),
        complement_differs=len(opcodes) > 1 and opcodes[0][0] == "equal" and opcodes[-1][0] != "equal",
        scope_differs=scope_words(item.text) != scope_words(candidate.text),
        polarity_differs=negation_count(item.text) % 2 != negation_count(candidate.text) % 2,
        named_by_candidate=named_overlap(named_replacements(candidate.text), item.text),
        named_by_user=tuple(sorted(distinguishing & heard)),
        user_says_new=bool((set(new_tokens) - set(old_tokens)) & heard),
        change=change_phrase(candidate.text),
    )


SWAP_WORDS = 3


def _swap(opcodes: list[tuple[str, int, int, int, int]], old: list[str], new: list[str]) -> tuple[str, str] | None:
    ops = [op for op in opcodes if op[0] != "equal"]
    if len(ops) != 1 or ops[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = ops[0]
    if i1 == 0 or j1 == 0 or i2 - i1 > SWAP_WORDS or j2 - j1 > SWAP_WORDS:
        return None
    return " ".join(old[i1:i2]), " ".join(new[j1:j2])


Similarity = Callable[[StateItem, StateItem], float]

__all__ = ["NOT_GROUNDED", "Evidence", "Grounding", "Similarity", "gather"]
