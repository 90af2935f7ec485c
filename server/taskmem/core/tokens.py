"""Exact token counting and cutting, for budgets that are guarantees.

The counter wraps a tiktoken Encoding (taskmem.tiktoken_offline loads it offline);
core code only sees count/cut/fit. Sums of per-piece counts are close to the
count of the joined text but not always equal (BPE merges across a join), so
every fitting function here measures the final text and trims until it fits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Protocol

ELLIPSIS = "…"


class Encoding(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...

    def decode(self, tokens: list[int]) -> str: ...


class TokenCounter:
    def __init__(self, encoding: Encoding) -> None:
        self._encoding = encoding
        # Rendered lines repeat between calls (the same items, the same messages).
        self.count: Callable[[str], int] = functools.lru_cache(maxsize=65_536)(self._count)

    def _count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text)) if text else 0

    def cut(self, text: str, budget: int, marker: str = ELLIPSIS) -> str:
        """text itself if it fits in budget tokens, else its longest prefix that fits with marker appended
        ("" when not even the marker fits)."""
        if self.count(text) <= budget:
            return text
        if budget <= 0 or self.count(marker) > budget:
            return ""
        tokens = self._encoding.encode_ordinary(text)
        keep = max(0, budget - self.count(marker))
        while keep >= 0:
            # A cut inside a multi-byte character decodes to U+FFFD: drop it rather than show it.
            head = self._encoding.decode(tokens[:keep]).rstrip("\ufffd")
            candidate = head + marker
            if self.count(candidate) <= budget:
                return candidate
            keep -= 1
        return ""

    def fit_lines(self, lines: Sequence[str], budget: int, header: str = "") -> tuple[str, int]:
        """header plus as many of lines (in order) as fit in budget, newline-joined; returns (text, lines kept).
        The text is "" when not even the header fits."""
        if self.count(header) > budget:
            return "", 0
        kept: list[str] = []
        used = self.count(header)
        for line in lines:
            cost = self.count(line) + 1
            if used + cost > budget:
                break
            kept.append(line)
            used += cost
        while True:
            text = "\n".join([header, *kept] if header else kept)
            if self.count(text) <= budget:
                return text, len(kept)
            if not kept:
                return "", 0
            kept.pop()
