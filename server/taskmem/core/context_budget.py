"""BuildContext's assembly: sections get percentage shares of one token budget; what a section leaves
unused flows to the tail (recent messages); the total never exceeds the budget.

Shares (the knowledge section holds the namespace's conventions and decisions):
    FULL:    summary 6, state 14, knowledge 10, memories 15, tail 55
    MINIMAL: summary 6, state 14, knowledge  8, memories 12, tail 60
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Sequence

from taskmem.core.tokens import TokenCounter


class ContextMode(enum.StrEnum):
    FULL = "CONTEXT_MODE_FULL"
    MINIMAL = "CONTEXT_MODE_MINIMAL"


SECTION_ORDER = ("summary", "state", "knowledge", "memories", "tail")
SHARES: dict[ContextMode, dict[str, int]] = {
    ContextMode.FULL: {"summary": 6, "state": 14, "knowledge": 10, "memories": 15, "tail": 55},
    ContextMode.MINIMAL: {"summary": 6, "state": 14, "knowledge": 8, "memories": 12, "tail": 60},
}
SEPARATOR = "\n\n"


@dataclasses.dataclass
class Section:
    name: str
    allowed: int
    text: str = ""
    used: int = 0
    truncated: bool = False
    omitted: str = ""


# A section's body for an allowance of tokens (its "## name" heading excluded): (body, truncated, omitted).
Body = tuple[str, bool, str]
Renderer = Callable[[int], Body]


def heading(name: str) -> str:
    return f"## {name}\n"


def fit_lines_body(counter: TokenCounter, lines: Sequence[str], allowance: int, noun: str) -> Body:
    """As many lines as fit, in order; omitted counts the rest ("3 knowledge entries")."""
    text, kept = counter.fit_lines(lines, allowance)
    left = len(lines) - kept
    return text, left > 0, f"{left} {noun}" if left else ""


def fit_text_body(counter: TokenCounter, text: str, allowance: int, noun: str) -> Body:
    """The text, cut with a marker when it does not fit."""
    cut = counter.cut(text, allowance)
    return cut, cut != text, f"end of the {noun}" if cut != text else ""


def fit_tail_body(counter: TokenCounter, lines_oldest_first: Sequence[str], allowance: int) -> Body:
    """The newest lines that fit, oldest first; the newest one is cut rather than lost when it alone is too long."""
    kept: list[str] = []
    used = 0
    for line in reversed(lines_oldest_first):
        cost = counter.count(line) + 1
        if used + cost > allowance:
            if not kept:
                cut = counter.cut(line, allowance)
                if cut:
                    kept.append(cut)
            break
        kept.append(line)
        used += cost
    kept.reverse()
    text = "\n".join(kept)
    while kept and counter.count(text) > allowance:
        kept.pop(0)
        text = "\n".join(kept)
    left = len(lines_oldest_first) - len(kept)
    cut_newest = bool(kept) and kept[-1] != lines_oldest_first[-1]
    omitted = ", ".join(part for part in (
        f"{left} older messages" if left else "", "end of the newest message" if cut_newest else "") if part)
    return text, bool(omitted), omitted


def _section(counter: TokenCounter, name: str, allowed: int, render: Renderer) -> Section:
    section = Section(name, allowed)
    head = heading(name)
    room = allowed - counter.count(head)
    if room <= 0:
        body, truncated, omitted = render(0)
        section.truncated, section.omitted = bool(body) or truncated, "everything" if body or truncated else ""
        return section
    body, section.truncated, section.omitted = render(room)
    if body:
        section.text = head + body
        section.used = counter.count(section.text)
    return section


def assemble_context(counter: TokenCounter, budget: int, mode: ContextMode,
                     renderers: dict[str, Renderer]) -> tuple[str, list[Section]]:
    """Render each section within its share (the tail last, with every unused token), join, and check the total."""
    shares = SHARES[mode]
    sections: list[Section] = []
    spent = 0
    for name in SECTION_ORDER[:-1]:
        allowed = budget * shares[name] // 100
        section = _section(counter, name, allowed, renderers.get(name, lambda room: ("", False, "")))
        sections.append(section)
        spent += section.used + (counter.count(SEPARATOR) if section.text else 0)
    tail_allowed = max(0, budget - spent)
    sections.append(_section(counter, "tail", tail_allowed, renderers.get("tail", lambda room: ("", False, ""))))
    text = SEPARATOR.join(s.text for s in sections if s.text)
    # Joins can merge tokens differently from the parts; shrink the tail (then the others) until it fits.
    while counter.count(text) > budget:
        victim = next((s for s in reversed(sections) if s.text), None)
        if victim is None:
            break
        shrunk = _section(counter, victim.name, max(0, victim.used - 1 - (counter.count(text) - budget)),
                          renderers.get(victim.name, lambda room: ("", False, "")))
        shrunk.allowed = victim.allowed
        sections[sections.index(victim)] = shrunk
        text = SEPARATOR.join(s.text for s in sections if s.text)
    for section in sections:
        section.used = counter.count(section.text)
    return text, sections
